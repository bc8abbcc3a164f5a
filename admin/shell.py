"""What every operators' handler needs from its request: the app's engine and settings, the
acting operator, a JSON body, and database work run in a thread (errors raised, never returned).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from admin.actions.actor import Actor
from admin.errors import InvalidError, LedgerUnavailableError
from admin.unavailable import DATABASE_ERRORS
from web.body import read_body
from web.errors import UnsupportedMediaError
from web.forms import media_type
from web.jsonbody import parse_json

T = TypeVar("T")
MAX_ADMIN_BODY = 64 * 1024


def engine_of(request: Request) -> Engine:
    """The ledger engine the app was built with."""
    engine: Engine = request.app.state.engine
    return engine


def settings_of(request: Request) -> Any:
    """The app's settings (None in a test app built without them)."""
    return getattr(request.app.state, "settings", None)


def actor_of(request: Request) -> Actor:
    """The operator the route's guard admitted, with the address it came from."""
    actor: Actor = request.state.operator
    return actor


async def in_thread(work: Callable[[], T]) -> T:
    """`work` in a worker thread; a database that does not answer is LedgerUnavailableError."""
    try:
        return await run_in_threadpool(work)
    except DATABASE_ERRORS:
        raise LedgerUnavailableError from None


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object; WebError (415, 408, 413, 400) or InvalidError (not an
    object) otherwise."""
    if media_type(request) != "application/json":
        raise UnsupportedMediaError("Content-Type must be application/json")
    body = parse_json(await read_body(request, MAX_ADMIN_BODY))
    if not isinstance(body, dict):
        raise InvalidError(None, "body must be a JSON object")
    return body
