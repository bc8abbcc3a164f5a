"""The receiver's part of the ASGI app: the webhook endpoint's state and the receiver's routes.

`payrecon.app.create_app` composes these with the operators' routes (`admin/`) into one app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from ledger.db import Readiness, readiness
from ledger.migrate import head_revision
from receiver.auth import SenderPolicy
from receiver.config import ReceiverSettings
from receiver.ingest import GroupCommitWriter
from receiver.metrics import CONTENT_TYPE, create_metrics
from receiver.readiness import CachedReadiness
from receiver.webhook import WebhookState


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


def webhook_state(settings: ReceiverSettings, engine: Engine) -> WebhookState:
    """What the webhook endpoint needs: sender checks, metrics and a group-commit writer on
    `engine` (unstarted: the app's lifespan starts and stops it)."""
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
    return WebhookState(
        policy=sender_policy(settings),
        writer=writer,
        metrics=receiver_metrics,
        max_body_bytes=settings.max_body_bytes,
        body_timeout=settings.body_timeout,
    )


async def healthz(request: Request) -> Response:
    """200 while the process lives."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    """200 when the ledger is at the code's revision and took a small write, else 503 saying
    why (`unavailable`, `locked`, `read_only`, `schema_outdated`). The check runs at most once
    a second per process (receiver.readiness); within that second the answer is reused."""
    cache = readiness_cache(request)
    state = cache.fresh() or await run_in_threadpool(cache.get)
    if state == "ok":
        return JSONResponse({"status": "ok", "database": "ok"})
    return JSONResponse({"status": "error", "database": state}, status_code=503)


def readiness_cache(request: Request) -> CachedReadiness:
    """The app's readiness cache, made on the first `/readyz` over the app's engine."""
    return app_readiness(request.app)


def app_readiness(app: Any) -> CachedReadiness:
    """The readiness cache of `app` (a Starlette app with `engine` in its state), made on first
    use; `/readyz` and `payrecon_ready` share it."""
    cache: CachedReadiness | None = getattr(app.state, "readiness", None)
    if cache is None:
        cache = app.state.readiness = CachedReadiness(readiness_check(app.state.engine))
    return cache


def readiness_check(engine: Engine) -> Callable[[], Readiness]:
    """The check `/readyz` caches: the ledger takes a write and is at the code's revision."""
    revision = head_revision()
    return lambda: readiness(engine, revision=revision)


async def metrics(request: Request) -> Response:
    """Prometheus text exposition."""
    # In a worker thread: collectors registered by the composition root (the relay's) read
    # the ledger at scrape time, which must not block the event loop.
    body = await run_in_threadpool(request.app.state.webhook.metrics.render)
    return Response(body, media_type=CONTENT_TYPE)


async def _to_webhook(request: Request) -> Response:
    """307 to `/webhook`: the method and body are sent again there.

    The Location is relative: a URL built from the request's Host would send the sender
    wherever the Host header says (docs/rules.md Robustness rules)."""
    query = request.url.query
    return RedirectResponse("/webhook" + (f"?{query}" if query else ""), 307)


def receiver_routes(webhook_endpoint: ASGIApp) -> list[BaseRoute]:
    """The webhook, health and metrics routes (the app reads `engine` and `webhook`, the
    WebhookState, from its state)."""
    return [
        # Never reached (the fast path's dispatch serves these paths first); listed so the
        # app's routes name every path it serves.
        Route("/webhook", webhook_endpoint, methods=["POST"]),
        Route("/webhook/{token}", webhook_endpoint, methods=["POST"]),
        # A sender configured with a trailing slash is redirected rather than refused. The
        # app's router makes no other slash redirects (payrecon/app.py), so this one is named.
        Route("/webhook/", _to_webhook, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
