"""GET /_sandbox/wallet/statement and /_sandbox/bank/statement: the exports finance imports."""

from __future__ import annotations

import re
from datetime import date

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sandbox.errors import BadQueryError
from sandbox.http import world_of
from sandbox.journal import Statement
from sandbox.models import iso
from sandbox.statement_formats import EXTENSIONS, FORMATS, render

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _day(request: Request, name: str, errors: dict[str, str]) -> date | None:
    text = request.query_params.get(name)
    if text is None or text == "":
        return None
    try:
        if not _DAY.fullmatch(text):
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        errors[name] = "must be a date YYYY-MM-DD"
        return None


def _query(request: Request) -> tuple[date | None, date | None, str]:
    """since, until and format from the query string, or 400 naming every bad one."""
    errors: dict[str, str] = {}
    since = _day(request, "since", errors)
    until = _day(request, "until", errors)
    fmt = request.query_params.get("format") or "csv"
    if fmt not in FORMATS:
        errors["format"] = f"must be one of: {', '.join(FORMATS)}"
    if since is not None and until is not None and since > until:
        errors["until"] = "must not be before since"
    if errors:
        raise BadQueryError(errors)
    return since, until, fmt


def _export(request: Request, statement: Statement, fmt: str, name: str) -> Response:
    created = iso(world_of(request).clock())
    assert created is not None
    body = render(statement, fmt, created=created)
    filename = f"{name}-{statement.first_day:%Y%m%d}-{statement.last_day:%Y%m%d}.{EXTENSIONS[fmt]}"
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(body, media_type=FORMATS[fmt], headers=headers)


async def wallet_statement(request: Request) -> Response:
    """GET /_sandbox/wallet/statement?since=&until=&format=csv|xlsx|mt940|camt053."""
    since, until, fmt = _query(request)
    statement = world_of(request).wallet_statement(since, until)
    return _export(request, statement, fmt, "wallet-statement")


async def bank_statement(request: Request) -> Response:
    """GET /_sandbox/bank/statement?since=&until=&format=…: the merchant's bank account."""
    since, until, fmt = _query(request)
    statement = world_of(request).bank_statement(since, until)
    return _export(request, statement, fmt, "bank-statement")


def statement_routes() -> list[Route]:
    """The statement export routes."""
    return [
        Route("/_sandbox/wallet/statement", wallet_statement, methods=["GET"]),
        Route("/_sandbox/bank/statement", bank_statement, methods=["GET"]),
    ]
