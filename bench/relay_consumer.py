"""The relay benchmark's consumer: answers 200 at once, counts, and notes when each event came."""

from __future__ import annotations

import time

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

_state: dict[str, object] = {}


def _reset() -> None:
    _state.update(count=0, first=None, last=None, receipts={})


async def hook(request: Request) -> Response:
    """Read the body, note the receipt (wall clock, shared by the processes), answer 200."""
    await request.body()
    now = time.time()
    _state["count"] = int(str(_state["count"])) + 1
    if _state["first"] is None:
        _state["first"] = now
    _state["last"] = now
    receipts = _state["receipts"]
    assert isinstance(receipts, dict)
    receipts.setdefault(request.headers.get("webhook-id", ""), now)
    return Response("ok")


async def stats(request: Request) -> Response:
    """Requests so far, the first and last receipt times, and one event's receipt time."""
    receipts = _state["receipts"]
    assert isinstance(receipts, dict)
    event = request.query_params.get("event")
    return JSONResponse(
        {
            "count": _state["count"],
            "first": _state["first"],
            "last": _state["last"],
            "at": receipts.get(event) if event else None,
        }
    )


async def reset(request: Request) -> Response:
    """Forget everything received."""
    _reset()
    return Response("reset")


_reset()
app = Starlette(
    routes=[
        Route("/hook", hook, methods=["POST"]),
        Route("/stats", stats),
        Route("/reset", reset, methods=["POST"]),
    ]
)
