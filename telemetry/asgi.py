"""One SERVER span per HTTP request, as a bare ASGI wrapper (used only while tracing is on).

The receiver's webhook is a raw-ASGI fast path (receiver/fastpath.py); the Starlette
instrumentation would add middleware frames to every delivery even with tracing off, so the
composition root wraps the app in this class only when tracing is on. The span continues the
caller's trace when the request carries a W3C `traceparent`. Requests `untraced` names (the
webhook's: its group commit records one span per batch instead, docs/architecture.md) pass
straight through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from telemetry import tracing


class TracedRequests:
    """ASGI middleware: each HTTP request runs inside a span named after its method and path."""

    def __init__(self, app: ASGIApp, *, untraced: Callable[[Scope], bool] | None = None) -> None:
        self.app = app
        self.untraced = untraced

    def __getattr__(self, name: str) -> Any:
        # The wrapped app's attributes (Starlette's `state`, `routes`…) stay reachable.
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, _flushing(send))
            return
        if (
            scope["type"] != "http"
            or not tracing.enabled()
            or (self.untraced is not None and self.untraced(scope))
        ):
            await self.app(scope, receive, send)
            return
        # Only a request that carries a traceparent pays for reading it (the webhook is hot).
        traceparent = None
        for name, value in scope["headers"]:
            if name == b"traceparent":
                traceparent = value.decode("latin-1")
                break
        path = scope["path"]
        # Paths holding a token or an id are named by their route, not by the value.
        route = "/webhook" if path.startswith("/webhook") else path
        method = scope["method"]
        attributes = {"http.request.method": method, "url.path": route}
        current = tracing.request_span(f"{method} {route}", attributes, traceparent)
        if current is None:  # switched off meanwhile
            await self.app(scope, receive, send)
            return
        with current:

            async def traced_send(message: Message) -> None:
                if message["type"] == "http.response.start":
                    current.status = message["status"]
                await send(message)

            await self.app(scope, receive, traced_send)


def _flushing(send: Send) -> Send:
    """`send` for the lifespan: the buffered spans are exported before the app reports its
    shutdown complete. uvicorn ends the process by re-raising SIGTERM once it has served, so
    code after the server's return never runs."""

    async def flushing_send(message: Message) -> None:
        if message["type"] == "lifespan.shutdown.complete":
            tracing.shutdown_tracing()
        await send(message)

    return flushing_send
