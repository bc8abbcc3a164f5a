"""The client's address: `X-Forwarded-For` believed only from a trusted proxy, read across all
its header lines in order, on every route and for every use (docs/rules.md: Robustness rules)."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable

from starlette.requests import Request

FORWARDED_FOR = b"x-forwarded-for"


@functools.lru_cache(maxsize=4096)
def _normal(address: str) -> str | None:
    try:
        return str(ipaddress.ip_address(address.strip().strip("[]")))
    except ValueError:
        return None


def forwarded_for(raw_headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """Every X-Forwarded-For line, in order, as one list (None when there is none).

    A proxy may append a line of its own instead of extending the sender's (HAProxy's `option
    forwardfor`), and the walk from the right must see that line.
    """
    lines = [value.decode("latin-1") for name, value in raw_headers if name == FORWARDED_FOR]
    return ",".join(lines) if lines else None


def client_address(peer: str | None, forwarded: str | None, trusted: frozenset[str]) -> str | None:
    """The client's address: `forwarded` (X-Forwarded-For) is believed only from a trusted
    proxy.

    Walk the header right to left past our own proxies; the first untrusted hop is the client.
    """
    address = _normal(peer) if peer else None
    if address is None or address not in trusted or not forwarded:
        return address
    for hop in reversed(forwarded.split(",")):
        hop_address = _normal(hop)
        if hop_address is None:
            return address  # a garbled hop: believe nothing further left of it
        if hop_address not in trusted:
            return hop_address
        address = hop_address
    return address


def request_address(request: Request, trusted: frozenset[str]) -> str | None:
    """`client_address` of a Starlette request, every X-Forwarded-For line joined."""
    peer = request.client.host if request.client else None
    return client_address(peer, forwarded_for(request.scope["headers"]), trusted)
