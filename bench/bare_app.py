"""The ceiling: a bare Starlette endpoint that parses the same JSON and answers 200."""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


async def webhook(request: Request) -> Response:
    """Parse the body and acknowledge, doing nothing durable."""
    json.loads(await request.body())
    return JSONResponse({"status": "ok", "outcome": "accepted"})


def create_app() -> Starlette:
    """The baseline app."""
    return Starlette(routes=[Route("/webhook", webhook, methods=["POST"])])
