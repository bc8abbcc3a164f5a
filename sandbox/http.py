"""Small HTTP helpers shared by the route modules: envelopes, bodies, pauses, origin."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from sandbox.errors import ApiError
from sandbox.scheduler import Runtime
from sandbox.state import World
from sandbox.validation import MAX_BODY_BYTES, parse_json_object


def world_of(request: Request) -> World:
    """The world behind this app (`app.state.sandbox`)."""
    world: World = request.app.state.sandbox
    return world


def runtime_of(request: Request) -> Runtime:
    """The background runtime of this app."""
    runtime: Runtime = request.app.state.runtime
    return runtime


def success(data: Any, message: str, *, status_code: int = 200, **extra: Any) -> JSONResponse:
    """The spec's success envelope: status, message, data (and extra keys, e.g. meta)."""
    return JSONResponse(
        {"status": "success", "message": message, "data": data, **extra}, status_code=status_code
    )


def failed(message: str, status_code: int) -> JSONResponse:
    """A failure body `{"status": "failed", "message": …}`."""
    return JSONResponse({"status": "failed", "message": message}, status_code=status_code)


async def json_body(request: Request) -> dict[str, Any]:
    """The request body as a JSON object (422 otherwise, 413 when too large)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(413, {"status": "failed", "message": "Request body too large"})
        chunks.append(chunk)
    return parse_json_object(b"".join(chunks))


async def pause(request: Request, seconds: float) -> None:
    """Sleep (an injected slowness), but stop early once the client has gone away."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (remaining := deadline - loop.time()) > 0:
        await asyncio.sleep(min(0.1, remaining))
        if await request.is_disconnected():
            return


def origin_address(request: Request) -> str | None:
    """The caller's address: the TCP peer, or X-Forwarded-For's first hop when trusted."""
    if world_of(request).config.trust_forwarded_for:
        forwarded = request.headers.get("x-forwarded-for")
        if forwarded:
            return forwarded.split(",")[0].strip()
    return request.client.host if request.client else None
