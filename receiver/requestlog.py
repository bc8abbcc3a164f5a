"""ASGI middleware: a request id bound to every log line, and one canonical line per request."""

from __future__ import annotations

import re
import secrets
import time

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = structlog.get_logger("payrecon.request")

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_QUIET = {"/healthz", "/readyz", "/metrics"}
# Whatever token a sender presents, right or wrong, stays out of the logs.
_TOKEN_PATH = re.compile(r"^/webhook/[^/]+")


class RequestLogMiddleware:
    """Binds `request_id` and logs method, path, status and duration once per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _SAFE_ID.match(incoming) else secrets.token_hex(16)
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            path = scope.get("path", "")
            if path not in _QUIET or status >= 400:
                logger.info(
                    "request",
                    method=scope.get("method"),
                    path=_TOKEN_PATH.sub("/webhook/[token]", path),
                    status=status,
                    duration_ms=round((time.perf_counter() - started) * 1000, 2),
                )
            structlog.contextvars.clear_contextvars()
