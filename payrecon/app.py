"""`create_app(settings)`: the service's ASGI app, composed of the receiver's routes and the
operators' (`admin/`), built on demand."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import AsyncIterator, Callable

from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware

from admin.routes import admin_routes
from admin.throttle import LoginThrottle
from admin.unavailable import INPUT_ERRORS, refused_input
from ledger.db import create_db_engine
from payrecon.settings import Settings
from provider.client import ProviderClient
from receiver.app import app_readiness, receiver_routes, webhook_state
from receiver.fastpath import ReceiverApp
from receiver.ingest import GroupCommitWriter
from receiver.metrics import ReadinessGauge
from receiver.requestlog import RequestLogMiddleware
from receiver.webhook import WebhookEndpoint
from relay.metrics import register_relay_metrics
from telemetry.gauges import register_ledger_gauges
from web.answers import http_error
from web.body import BodyDeadline


def _lifespan(
    writer: GroupCommitWriter,
    owned_engine: Engine | None,
    payout_client: ProviderClient | None,
) -> Callable[[Starlette], contextlib.AbstractAsyncContextManager[None]]:
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
            if owned_engine is not None:
                owned_engine.dispose()

    return lifespan


def create_app(
    settings: Settings,
    *,
    engine: Engine | None = None,
    payout_client: ProviderClient | None = None,
) -> Starlette:
    """Build the app for `settings`; the engine is created here unless one is given.

    `payout_client` is the provider client every `POST /api/transfers` shares (its connection
    pool and enquiry cache outlive a request); the app closes it when it shuts down. Without
    one that route answers 503 (serving webhooks needs no provider settings).
    """
    own_engine = engine is None
    engine = engine or create_db_engine(settings.database_url)
    webhook = webhook_state(settings, engine)
    # The relay's figures join the receiver's on /metrics, read from the ledger at each scrape.
    register_relay_metrics(webhook.metrics.registry, engine)
    register_ledger_gauges(webhook.metrics.registry, engine)
    endpoint = WebhookEndpoint(webhook)
    app = ReceiverApp(
        webhook_endpoint=endpoint,
        routes=[*receiver_routes(endpoint), *admin_routes()],
        middleware=[Middleware(RequestLogMiddleware)],
        exception_handlers={
            HTTPException: http_error,
            # A value the database refuses is bad input (4xx), never a 500 or a false 503.
            **dict.fromkeys(INPUT_ERRORS, refused_input),
        },
        lifespan=_lifespan(webhook.writer, engine if own_engine else None, payout_client),
    )
    # A path that matches no route is a 404 JSON error, never a 307 to a neighbour: an id
    # holding an encoded slash (/api/events/%2F) reached Starlette as /api/events// and was
    # redirected with an empty body, and no route of ours is meant to be reached by a redirect.
    app.router.redirect_slashes = False
    app.state.settings = settings
    app.state.engine = engine
    admin_token = settings.admin_token
    app.state.admin_token = None if admin_token is None else admin_token.get_secret_value()
    app.state.payout_client = payout_client
    app.state.login_throttle = LoginThrottle(
        max_failures=settings.login_max_failures,
        window=settings.login_window,
        clock=time.monotonic,
    )
    app.state.webhook = webhook
    webhook.metrics.registry.register(ReadinessGauge(lambda: app_readiness(app).get()))
    # Every body an operators' route reads has PAYRECON_BODY_TIMEOUT to arrive (web.body).
    app.state.body_deadline = BodyDeadline(settings.body_timeout)
    return app
