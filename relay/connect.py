"""Connections the relay may open: each host resolved, every address checked, the checked one
connected to (docs/rules.md: Robustness rules, "Relay destinations are not a way into the host").

An endpoint's URL was judged by its spelling when it was registered (relay.endpoints), but a
DNS name can resolve to 127.0.0.1 or 169.254.169.254 at any time. So every new connection of
the worker's client goes through `CheckedBackend`: the host is resolved (`getaddrinfo` in a
thread), the connection is refused when **any** of its addresses is one the relay does not
connect to, and otherwise made to those very addresses, so a second lookup cannot answer
differently (DNS rebinding). TLS still verifies the certificate against the URL's host name,
since only the TCP target changes. The client gets an explicit transport, so proxy variables
(`HTTPS_PROXY`…) are not read: a proxy would connect to the host payrecon checked for it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence

import anyio
import httpcore
import httpx

from relay.addresses import Address, Network, forbidden_kind, judged_address
from relay.errors import DestinationRefusedError

# The most addresses of one host tried in turn before the connection fails.
MAX_ADDRESSES = 8


async def resolve(host: str, port: int) -> list[Address]:
    """The addresses `host` resolves to, in the resolver's order; DestinationRefusedError when
    it does not resolve."""
    name = host.strip("[]")
    try:
        # A cancelled wait (the attempt's deadline) leaves the lookup to end on its own.
        infos = await anyio.to_thread.run_sync(
            socket.getaddrinfo, name, port, 0, socket.SOCK_STREAM, abandon_on_cancel=True
        )
    except (OSError, UnicodeError) as exc:
        raise DestinationRefusedError(f"{name} does not resolve: {exc}") from None
    addresses: list[Address] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        # An IPv6 sockaddr carries a scope id apart from the address text.
        address = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def check_addresses(host: str, addresses: Sequence[Address], allow: Sequence[Network]) -> None:
    """DestinationRefusedError naming the first address of `host` the relay must not connect
    to (nor, then, to any other address of that host)."""
    for address in addresses:
        kind = forbidden_kind(address, allow)
        if kind is not None:
            meant = judged_address(address)
            raise DestinationRefusedError(
                f"refused: {host} resolves to {meant}, {kind} address "
                "not in PAYRECON_RELAY_ALLOW_NETWORKS (payrecon sends no events into its own host)"
            )


class CheckedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to checked addresses of a host."""

    def __init__(
        self, allow: Sequence[Network], inner: httpcore.AsyncNetworkBackend | None = None
    ) -> None:
        self._allow = tuple(allow)
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await resolve(host, port)
        check_addresses(host, addresses, self._allow)
        options = list(socket_options or ())
        failure: Exception = httpcore.ConnectError(f"{host} has no address")
        for address in addresses[:MAX_ADDRESSES]:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise DestinationRefusedError("the relay does not connect to unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class CheckedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport, whose connection pool opens connections through CheckedBackend."""

    def __init__(self, *, allow: Sequence[Network], limits: httpx.Limits) -> None:
        super().__init__(limits=limits)
        # The one departure from httpx's default transport: the same pool, with the network
        # backend httpcore takes as its seam (httpx does not pass one through).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(),  # httpx's own CA rules
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=CheckedBackend(allow),
        )
