"""create_app(config): the sandbox as a Starlette app; its world is `app.state.sandbox`."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from sandbox.config import SandboxConfig
from sandbox.control_routes import control_routes
from sandbox.errors import ApiError
from sandbox.http import failed
from sandbox.openapi import build_openapi
from sandbox.provider_routes import provider_routes
from sandbox.scheduler import Runtime
from sandbox.state import World
from sandbox.statement_routes import statement_routes
from sandbox.webhooks import WebhookDispatcher

logger = logging.getLogger(__name__)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body, status_code=exc.status_code, headers=exc.headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    messages = {404: "Not found", 405: "Method not allowed"}
    message = messages.get(exc.status_code, str(exc.detail))
    return JSONResponse(
        {"status": "failed", "message": message},
        status_code=exc.status_code,
        headers=exc.headers,
    )


async def _disconnected(request: Request, exc: Exception) -> Response:
    # The client went away mid-body; nobody reads this answer.
    return Response(status_code=400)


async def _unexpected(request: Request, exc: Exception) -> Response:
    logger.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return failed("Internal error", 500)


async def _openapi(request: Request) -> JSONResponse:
    return JSONResponse(build_openapi())


def create_app(config: SandboxConfig | None = None) -> Starlette:
    """Build one emulator: routes, its world (`app.state.sandbox`) and background runtime.

    Completion of pending transfers and webhook delivery run in the app's
    lifespan; they start with the server and stop cleanly with it.
    """
    config = config or SandboxConfig()
    world = World(config)
    runtime = Runtime(world)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        limits = httpx.Limits(max_connections=config.webhook_concurrency * 2)
        client = httpx.AsyncClient(timeout=config.webhook_timeout, limits=limits, trust_env=False)
        runtime.start(WebhookDispatcher(world, client))
        try:
            yield
        finally:
            await runtime.stop()
            await client.aclose()

    routes = [
        *provider_routes(),
        *control_routes(),
        *statement_routes(),
        Route("/openapi.json", _openapi),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            ClientDisconnect: _disconnected,
            Exception: _unexpected,
        },
    )
    app.state.sandbox = world
    app.state.runtime = runtime
    return app
