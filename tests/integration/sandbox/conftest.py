"""Fixtures: a real sandbox server and a tiny webhook receiver, both on uvicorn."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sandbox.app import create_app
from sandbox.config import SandboxConfig
from sandbox.state import World
from tests.support.servers import running_server

GOOD_ACCOUNT = ("044", "0440000017")  # Access Bank, ADAEZE OKAFOR
SECOND_ACCOUNT = ("057", "0570000015")  # Zenith Bank
DORMANT_ACCOUNT = ("058", "0589999929")
PENDING_ACCOUNT = ("058", "0589999936")
ENQUIRY_FAILS_ACCOUNT = ("058", "0589999912")


@dataclass
class Receiver:
    """A local webhook endpoint that records every delivery and answers as told."""

    url: str
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)  # answers to give, then 200

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies received, in arrival order."""
        return [d["json"] for d in self.deliveries]


@dataclass
class Sandbox:
    """A running sandbox: its base URL, config and world."""

    url: str
    config: SandboxConfig
    world: World

    def client(
        self, key: str | None = "secret", headers: dict[str, str] | None = None, **kwargs: Any
    ) -> httpx.Client:
        """An httpx client; key is 'secret', 'public', a literal key, or None for no header."""
        headers = dict(headers or {})
        if key is not None:
            literal = {"secret": self.config.secret_key, "public": self.config.public_key}
            headers["Authorization"] = f"Bearer {literal.get(key, key)}"
        kwargs.setdefault("timeout", 10)
        return httpx.Client(base_url=self.url, headers=headers, **kwargs)

    def control(self) -> httpx.Client:
        """A client for the /_sandbox routes (no auth)."""
        return httpx.Client(base_url=self.url, timeout=10)


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll until predicate() is truthy; return its value (fail after timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


@pytest.fixture(scope="session")
def receiver_server() -> Iterator[tuple[str, dict[str, Receiver]]]:
    """One receiver server for the session; each test gets its own path on it."""
    channels: dict[str, Receiver] = {}

    async def hook(request: Request) -> JSONResponse:
        rec = channels[request.path_params["channel"]]
        raw = await request.body()
        rec.deliveries.append(
            {"json": await request.json(), "raw": raw, "headers": dict(request.headers)}
        )
        status = rec.statuses.pop(0) if rec.statuses else 200
        return JSONResponse({"ok": status < 300}, status_code=status)

    app = Starlette(routes=[Route("/hook/{channel}", hook, methods=["POST"])])
    with running_server(app) as url:
        yield url, channels


@pytest.fixture
def receiver(receiver_server: tuple[str, dict[str, Receiver]]) -> Receiver:
    """A fresh webhook endpoint (its own path on the shared receiver server)."""
    url, channels = receiver_server
    channel = uuid.uuid4().hex
    channels[channel] = Receiver(url=f"{url}/hook/{channel}")
    return channels[channel]


@pytest.fixture
def start_sandbox() -> Iterator[Callable[..., Sandbox]]:
    """Start sandboxes with config overrides; all stop at the end of the test."""
    stack = contextlib.ExitStack()

    def start(**overrides: Any) -> Sandbox:
        options: dict[str, Any] = {
            "complete_after": 0.05,
            "webhook_retry_delays": (0.05, 0.05, 0.05),
            "reorder_max_hold": 0.5,
            "seed": 1,
        }
        options.update(overrides)
        config = SandboxConfig(**options)
        app = create_app(config)
        url = stack.enter_context(running_server(app, proxy_headers=False))
        return Sandbox(url=url, config=config, world=app.state.sandbox)

    with stack:
        yield start


@pytest.fixture(scope="module")
def shared_sandbox(receiver_server: tuple[str, dict[str, Receiver]]) -> Iterator[Sandbox]:
    """One sandbox per module, for tests whose requests change no state (401, 404, 422)."""
    url, channels = receiver_server
    channel = uuid.uuid4().hex
    channels[channel] = Receiver(url=f"{url}/hook/{channel}")
    config = SandboxConfig(webhook_url=channels[channel].url, seed=1, complete_after=0.05)
    app = create_app(config)
    with running_server(app, proxy_headers=False) as base:
        yield Sandbox(url=base, config=config, world=app.state.sandbox)


@pytest.fixture
def sandbox(start_sandbox: Callable[..., Sandbox], receiver: Receiver) -> Sandbox:
    """A sandbox wired to the receiver, completing transfers after 50 ms."""
    return start_sandbox(webhook_url=receiver.url)


def transfer_body(reference: str, amount: int = 100_000, account: tuple[str, str] = GOOD_ACCOUNT):
    """A valid initiate body."""
    return {
        "amount": amount,
        "bank_code": account[0],
        "account_number": account[1],
        "reference": reference,
    }
