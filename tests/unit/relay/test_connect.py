"""The send-time check: a host is resolved, refused when any of its addresses is an own one,
and connected to at the checked addresses only (resolution faked: no DNS, no network)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpcore
import pytest

from relay import connect
from relay.addresses import parse_networks
from relay.connect import CheckedBackend
from relay.errors import DestinationRefusedError


class Recorder(httpcore.AsyncNetworkBackend):
    """A backend that records where it was asked to connect and refuses every connection."""

    def __init__(self) -> None:
        self.targets: list[str] = []

    async def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        self.targets.append(host)
        raise httpcore.ConnectError("fake: nothing listens")


def fake_resolver(monkeypatch: pytest.MonkeyPatch, addresses: list[str]) -> None:
    def getaddrinfo(host: str, port: int, *args: Any) -> list[Any]:
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in addresses
        ]

    monkeypatch.setattr(connect.socket, "getaddrinfo", getaddrinfo)


def attempt(backend: CheckedBackend) -> BaseException:
    async def run() -> None:
        await backend.connect_tcp("orders.example.com", 443)

    with pytest.raises((DestinationRefusedError, httpcore.ConnectError)) as caught:
        asyncio.run(run())
    return caught.value


def test_a_name_with_any_own_address_is_refused_before_connecting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One loopback address among private ones refuses the host; nothing is connected to."""
    fake_resolver(monkeypatch, ["10.0.0.5", "127.0.0.1"])
    inner = Recorder()
    error = attempt(CheckedBackend((), inner))
    assert isinstance(error, DestinationRefusedError)
    assert "127.0.0.1" in str(error) and "loopback" in str(error)
    assert inner.targets == []


@pytest.mark.parametrize("address", ["169.254.169.254", "::ffff:127.0.0.1", "0.0.0.0", "::1"])
def test_metadata_mapped_and_unspecified_answers_are_refused(
    monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    """A name resolving to the metadata address, a mapped loopback or 0.0.0.0 is refused."""
    fake_resolver(monkeypatch, [address])
    assert isinstance(attempt(CheckedBackend((), Recorder())), DestinationRefusedError)


def test_checked_addresses_are_the_ones_connected_to(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed addresses are connected to as resolved, in order (no second lookup)."""
    fake_resolver(monkeypatch, ["10.0.0.5", "127.0.0.1", "10.0.0.5"])
    inner = Recorder()
    error = attempt(CheckedBackend(parse_networks("127.0.0.0/8"), inner))
    assert isinstance(error, httpcore.ConnectError)
    assert inner.targets == ["10.0.0.5", "127.0.0.1"]


def test_a_name_that_does_not_resolve_is_a_refusal_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lookup failure is a DestinationRefusedError naming the host, never a crash."""

    def getaddrinfo(*_args: Any) -> list[Any]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(connect.socket, "getaddrinfo", getaddrinfo)
    error = attempt(CheckedBackend((), Recorder()))
    assert isinstance(error, DestinationRefusedError)
    assert "orders.example.com does not resolve" in str(error)
