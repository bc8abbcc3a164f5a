"""The webhook's fast path: the receiver's three deliberate departures from plain Starlette.

A delivery is the one request served at volume, and the receiver must keep at least 0.4× the
throughput of a bare Starlette endpoint, so the webhook paths skip what every other route goes
through. Each departure keeps what a sender and an operator see (the same answers byte for
byte, the same log line); tests compare each with what plain Starlette does.

1. **Dispatch ahead of the middleware** (`route_path`, `WebhookRoutes`, `ReceiverApp`):
   `/webhook` and `/webhook/{token}` go to the bare ASGI endpoint (`receiver/webhook.py`)
   before Starlette's error middleware, the request-log middleware and the router. A delivery
   builds no Request object, walks no route list and passes through no middleware frames.
2. **Pre-rendered answers** (`PreparedResponse`, `SUCCESS`, `NOT_FOUND`, `NOT_ALLOWED`): the
   200 of each outcome and the two routing errors are rendered once, by Starlette's own
   JSONResponse, and sent as two bare ASGI messages: no JSON encoding, header building or
   Response object per request.
3. **The endpoint's own log line** (`LineLogger`): the endpoint writes the canonical request
   line itself with the request id passed along in a dict, instead of the middleware's
   wrapped `send` and `structlog.contextvars` binding, through a logger assembled once per
   structlog configuration (structlog's lazy proxy assembles one per line, a sixth of the
   line's cost).

What they buy (bench/RESULTS.md, "Bare ASGI webhook endpoint", measured together as one step):
with the database work stubbed out, the HTTP side went from ~4,600 to ~11,000 req/s on one
pinned core, against 13,500-16,800 for a bare Starlette endpoint. With the writer's linger and
`gc.freeze`, the whole receiver on SQLite went from 0.24× to 0.30× the bare endpoint (VM 1); it
now runs at 0.47-0.48× on SQLite and 0.34-0.36× on PostgreSQL (VM 2, runs D to G).
The log line alone is ~11 % of the event loop's time per delivery (7 µs in isolation, profile
of commit d3a2329). Whatever is added here runs once per delivery: measure it first.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

import structlog
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ledger.types import DeliveryOutcome
from receiver.errors import IngestUnavailableError, ReceiverError
from receiver.requestlog import REQUEST_LOGGER, loggable_path
from web.answers import RETRY_AFTER, json_error

# 1. Dispatch ahead of the middleware.

_WEBHOOK = "/webhook"
_WEBHOOK_TOKEN = "/webhook/"


def route_path(scope: Scope) -> str:
    """The path Starlette's router matches: `path` without the `root_path` it is mounted under.

    The same rule as the router's own (a root path counts only up to a `/` boundary).
    """
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if not root or not path.startswith(root):
        return path
    if path == root:
        return ""
    return path[len(root) :] if path[len(root)] == "/" else path


def is_webhook(scope: Scope) -> bool:
    """True for a request `WebhookRoutes` sends to the webhook endpoint (`/webhook` and
    `/webhook/{token}`), by the same rule."""
    if scope["type"] != "http":
        return False
    path = route_path(scope)
    if path == _WEBHOOK:
        return True
    token = path[len(_WEBHOOK_TOKEN) :] if path.startswith(_WEBHOOK_TOKEN) else ""
    return bool(token) and "/" not in token


class WebhookRoutes:
    """Pure ASGI dispatch: `/webhook` and `/webhook/{token}` go straight to the webhook endpoint;
    every other request goes on to the rest of the app."""

    def __init__(self, app: ASGIApp, endpoint: ASGIApp) -> None:
        self.app = app
        self.endpoint = endpoint

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # A plain function handing back the chosen app's coroutine: one frame less per request.
        if scope["type"] == "http":
            # Matched as Starlette's Router matches the two routes (with the path it matches
            # on), for any method (405 is the endpoint's answer). `/webhook/` and `/webhook/a/b`
            # go on to the router, which redirects the one and answers 404 to the other.
            path = route_path(scope)
            if path == _WEBHOOK:
                scope["path_params"] = {}
                return self.endpoint(scope, receive, send)
            if path.startswith(_WEBHOOK_TOKEN):
                token = path[len(_WEBHOOK_TOKEN) :]
                if token and "/" not in token:
                    scope["path_params"] = {"token": token}
                    return self.endpoint(scope, receive, send)
        return self.app(scope, receive, send)


class ReceiverApp(Starlette):
    """A Starlette app with the webhook paths dispatched ahead of its middleware.

    Outside even Starlette's error middleware: the endpoint logs its own line, and an exception
    escaping it gets a plain 500 from the server, which is what that middleware sends too.
    """

    def __init__(self, *, webhook_endpoint: ASGIApp, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.webhook_endpoint = webhook_endpoint

    def build_middleware_stack(self) -> ASGIApp:
        """Starlette's stack, behind the webhook dispatch."""
        return WebhookRoutes(super().build_middleware_stack(), self.webhook_endpoint)


# 2. Pre-rendered answers.


@dataclass(frozen=True, slots=True)
class PreparedResponse:
    """A rendered JSON answer: status, body, and the headers other than `x-request-id`."""

    status: int
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...]

    @classmethod
    def of(cls, response: Response) -> PreparedResponse:
        """The bytes `response` would send, kept to be sent as they are."""
        return cls(response.status_code, bytes(response.body), tuple(response.raw_headers))

    async def send(self, send: Send, request_id: str) -> None:
        """Send this answer, tagged with the request's id."""
        await send(
            {
                "type": "http.response.start",
                "status": self.status,
                "headers": [*self.headers, (b"x-request-id", request_id.encode())],
            }
        )
        await send({"type": "http.response.body", "body": self.body})


def error_answer(exc: ReceiverError) -> PreparedResponse:
    """A clear JSON error for a receiver error (rendered when it happens: errors are rare)."""
    extra: dict[str, Any] = {}
    field = getattr(exc, "field", None)
    if field:
        extra["field"] = field
    headers = dict(exc.headers)  # a 408's Connection: close (receiver.errors)
    if isinstance(exc, IngestUnavailableError):
        headers.update(RETRY_AFTER)
    return PreparedResponse.of(
        json_error(exc.status_code, exc.code, exc.message, headers=headers, **extra)
    )


def public_outcome(outcome: DeliveryOutcome) -> str:
    """The outcome the sender is told (docs/rules.md names three)."""
    # A conflicting copy is not applied, so it is a duplicate to the sender (the conflict is a
    # finding for ops, not the provider's problem).
    if outcome is DeliveryOutcome.CONFLICTING:
        return DeliveryOutcome.DUPLICATE.value
    return outcome.value


# The constant answers: 200 for each outcome, and the two routing errors (the words of
# Starlette's own 404 and 405, as the router answers every other path).
SUCCESS = {
    outcome: PreparedResponse.of(JSONResponse({"status": "ok", "outcome": public_outcome(outcome)}))
    for outcome in DeliveryOutcome
}
NOT_FOUND = PreparedResponse.of(json_error(404, "not_found", "Not Found"))
NOT_ALLOWED = PreparedResponse.of(
    json_error(405, "method_not_allowed", "Method Not Allowed", headers={"Allow": "POST"})
)

# 3. The endpoint's own log line.

logger = structlog.get_logger(REQUEST_LOGGER)


class LineLogger:
    """The request logger, assembled once per structlog configuration rather than once per line
    (which is what structlog's lazy proxy does, for a sixth of the line's cost)."""

    def __init__(self) -> None:
        self._config: dict[str, Any] = {}
        self._bound: Any = None

    def get(self) -> Any:
        """The assembled logger for the configuration in force.

        A new `configure_logging` is seen here; `capture_logs` edits the processor list in
        place, which an assembled logger shares, so it needs nothing.
        """
        config = structlog.get_config()
        if config != self._config:
            self._config, self._bound = config, logger.bind()
        return self._bound

    def line(self, scope: Scope, status: int, started: float, bound: dict[str, Any]) -> None:
        """The canonical request line, as the request-log middleware writes it for other
        routes, with what the endpoint learnt about the delivery (`bound`)."""
        self.get().info(
            "request",
            method=scope["method"],
            path=loggable_path(scope["path"]),
            status=status,
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
            **bound,
        )
