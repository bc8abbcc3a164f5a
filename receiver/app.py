"""`create_app(settings)`: the receiver's Starlette application, built on demand."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator, Awaitable
from typing import Any

from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ledger.db import create_db_engine, readiness
from ledger.migrate import head_revision
from provider.client import ProviderClient
from receiver import admin, reports
from receiver.adminauth import admin_only
from receiver.auth import SenderPolicy
from receiver.config import ReceiverSettings
from receiver.ingest import GroupCommitWriter
from receiver.metrics import CONTENT_TYPE, create_metrics
from receiver.requestlog import RequestLogMiddleware
from receiver.webhook import WebhookEndpoint, WebhookState


def _secret(value: Any) -> str | None:
    return None if value is None else str(value.get_secret_value())


def sender_policy(settings: ReceiverSettings) -> SenderPolicy:
    """The webhook sender checks configured in `settings`."""
    return SenderPolicy(
        token=_secret(settings.webhook_token),
        shared_secret=_secret(settings.webhook_secret),
        secret_header=settings.webhook_secret_header,
        allowed_ips=frozenset(settings.webhook_allowed_ips),
        trusted_proxies=frozenset(settings.trusted_proxies),
        hmac_secret=_secret(settings.webhook_hmac_secret),
        hmac_header=settings.webhook_hmac_header,
        standard_secret=_secret(settings.webhook_standard_secret),
    )


async def healthz(request: Request) -> Response:
    """200 while the process lives."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    """200 when the ledger is at the code's revision and took a small write, else 503 saying
    why (`unavailable`, `locked`, `read_only`, `schema_outdated`)."""
    state = await run_in_threadpool(readiness, request.app.state.engine, revision=head_revision())
    if state == "ok":
        return JSONResponse({"status": "ok", "database": "ok"})
    return JSONResponse({"status": "error", "database": state}, status_code=503)


async def metrics(request: Request) -> Response:
    """Prometheus text exposition."""
    return Response(request.app.state.webhook.metrics.render(), media_type=CONTENT_TYPE)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: "Not Found", 405: "Method Not Allowed"}.get(exc.status_code, exc.detail)
    return JSONResponse(
        {"status": "error", "error": message.lower().replace(" ", "_"), "message": message},
        status_code=exc.status_code,
        headers=exc.headers,
    )


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


class WebhookRoutes:
    """Pure ASGI dispatch: `/webhook` and `/webhook/{token}` go straight to the webhook endpoint
    (its hot path has no use for routing, Request objects or the request-log middleware); every
    other request goes on to the rest of the app."""

    def __init__(self, app: ASGIApp, endpoint: ASGIApp) -> None:
        self.app = app
        self.endpoint = endpoint

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # A plain function handing back the chosen app's coroutine: one frame less per request.
        if scope["type"] == "http":
            # Matched as Starlette's Router matched the two routes (with the path it matches
            # on), for any method (405 is the endpoint's answer); `/webhook/` and `/webhook/a/b`
            # go on to the router as before.
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
    """The receiver's Starlette app, with the webhook paths dispatched ahead of its middleware.

    Outside even Starlette's error middleware: the endpoint logs its own line and an exception
    escaping it still gets a plain 500 from the server, as that middleware would have sent.
    """

    def __init__(self, *, webhook_endpoint: ASGIApp, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.webhook_endpoint = webhook_endpoint

    def build_middleware_stack(self) -> ASGIApp:
        """Starlette's stack, behind the webhook dispatch."""
        return WebhookRoutes(super().build_middleware_stack(), self.webhook_endpoint)


def _routes(webhook_endpoint: ASGIApp) -> list[Route]:
    return [
        # Never reached (WebhookRoutes serves these paths first), but the router still needs
        # them to redirect `/webhook/` to `/webhook` as it always has.
        Route("/webhook", webhook_endpoint, methods=["POST"]),
        Route("/webhook/{token}", webhook_endpoint, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/api/transfers", admin_only(admin.list_transfer_page), methods=["GET"]),
        Route("/api/transfers", admin_only(admin.post_payout), methods=["POST"]),
        Route("/api/transfers/expected", admin_only(admin.post_expected), methods=["POST"]),
        Route("/api/transfers/{reference}", admin_only(admin.get_transfer), methods=["GET"]),
        Route("/api/reports/summary", admin_only(reports.summary_api), methods=["GET"]),
        Route("/reports", admin_only(reports.reports_page), methods=["GET"]),
        Route("/reports/findings/{id:int}/ack", admin_only(reports.acknowledge), methods=["POST"]),
    ]


def create_app(
    settings: ReceiverSettings,
    *,
    engine: Engine | None = None,
    payout_client: ProviderClient | None = None,
) -> Starlette:
    """Build the receiver for `settings`; the engine is created here unless one is given.

    `payout_client` is the provider client every `POST /api/transfers` shares (its connection
    pool and enquiry cache outlive a request); the app closes it when it shuts down. Without
    one that route answers 503 (serving webhooks needs no provider settings).
    """
    own_engine = engine is None
    engine = engine or create_db_engine(settings.database_url)
    receiver_metrics = create_metrics()

    def observe_batch(size: int, seconds: float) -> None:
        receiver_metrics.batch_size.observe(size)
        receiver_metrics.batch_seconds.observe(seconds)

    writer = GroupCommitWriter(
        engine,
        batch_max=settings.batch_max,
        transactions=1 if engine.dialect.name == "sqlite" else 2,
        on_batch=observe_batch,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await writer.start()
        # Everything built so far (modules, app, engine) lives as long as the server: moved out
        # of the collector's generations, it is not rescanned at every collection under load.
        gc.freeze()
        try:
            yield
        finally:
            await writer.stop()
            if payout_client is not None:
                payout_client.close()
            if own_engine:
                engine.dispose()

    webhook = WebhookState(
        policy=sender_policy(settings),
        writer=writer,
        metrics=receiver_metrics,
        max_body_bytes=settings.max_body_bytes,
        body_timeout=settings.body_timeout,
    )
    endpoint = WebhookEndpoint(webhook)
    app = ReceiverApp(
        webhook_endpoint=endpoint,
        routes=_routes(endpoint),
        middleware=[Middleware(RequestLogMiddleware)],
        exception_handlers={HTTPException: _http_error},
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.admin_token = _secret(settings.admin_token)
    app.state.payout_client = payout_client
    app.state.webhook = webhook
    return app
