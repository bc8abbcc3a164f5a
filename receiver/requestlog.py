"""ASGI middleware: a request id bound to every log line, and one canonical line per request."""

from __future__ import annotations

import random
import re
import time

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The logger of the canonical request lines, the webhook's (receiver/fastpath.py) and the rest.
REQUEST_LOGGER = "payrecon.request"
logger = structlog.get_logger(REQUEST_LOGGER)

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_QUIET = {"/healthz", "/readyz", "/metrics"}
# Whatever token a sender presents, right or wrong, stays out of the logs.
_TOKEN_PATH = re.compile(r"^/webhook/[^/]+")


def request_id_of(incoming: str | None) -> str:
    """The sender's X-Request-ID when it is safe to echo and log, else a new random one."""
    if incoming and _SAFE_ID.match(incoming):
        return incoming
    # 128 random bits from the process's PRNG: an id needs to be unique, not unpredictable,
    # and this skips the getrandom system call of `secrets`.
    return f"{random.getrandbits(128):032x}"


def loggable_path(path: str) -> str:
    """`path` with a webhook path token replaced by `[token]`."""
    if not path.startswith("/webhook/"):
        return path
    return _TOKEN_PATH.sub("/webhook/[token]", path)


class RequestLogMiddleware:
    """Binds `request_id` and logs method, path, status and duration once per request.

    The webhook paths do not come through here: the endpoint writes the same line itself
    (`receiver/fastpath.py` says why).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id")
        request_id = request_id_of(incoming.decode("latin-1") if incoming else None)
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
                    path=loggable_path(path),
                    status=status,
                    duration_ms=round((time.perf_counter() - started) * 1000, 2),
                )
            structlog.contextvars.clear_contextvars()
