"""A deadline for request headers, which uvicorn's own options cannot set.

uvicorn times out only idle keep-alive connections; a sender that opens a connection and
never finishes its headers keeps it (and a slot of `--limit-concurrency`) for as long as it
likes. `header_timeout_protocol` is uvicorn's httptools protocol with one more rule: a
connection whose request headers have not all arrived `timeout` seconds after the request
began (or the connection opened) is closed.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HeaderDeadlines:
    """Closes connections still waiting for request headers past their deadline.

    Every connection gets the same timeout, so deadlines fall in the order they are set: one
    timer, armed for the oldest, serves them all (a timer per request would cost more).
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        # The connections waiting for headers, oldest first, with their deadlines (loop time).
        self._waiting: dict[HttpToolsProtocol, float] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, connection: HttpToolsProtocol) -> None:
        """Headers are due from `connection` within the timeout (unless already due)."""
        if connection in self._waiting:
            return
        loop = connection.loop
        deadline = loop.time() + self.timeout
        self._waiting[connection] = deadline
        if self._timer is None or self._loop is not loop:
            self._loop = loop
            self._timer = loop.call_at(deadline, self._expire)

    def stop(self, connection: HttpToolsProtocol) -> None:
        """`connection`'s headers are in (or it is gone)."""
        self._waiting.pop(connection, None)

    def _expire(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        self._timer = None
        late = []
        for connection, deadline in self._waiting.items():
            if deadline > now:
                self._timer = self._loop.call_at(deadline, self._expire)
                break
            late.append(connection)
        for connection in late:
            del self._waiting[connection]
            if not connection.transport.is_closing():
                connection.transport.close()


def header_timeout_protocol(timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol, closing connections whose headers take over `timeout` s."""
    deadlines = HeaderDeadlines(timeout)

    class HeaderTimeoutProtocol(HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            deadlines.start(self)

        def on_message_begin(self) -> None:
            # The next request on a kept-alive connection: its headers are due too.
            deadlines.start(self)
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            deadlines.stop(self)
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            deadlines.stop(self)
            super().connection_lost(exc)

    return HeaderTimeoutProtocol
