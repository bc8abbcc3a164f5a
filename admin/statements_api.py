"""Statements and periods over the JSON API (docs/rules.md "Statements and period tie-out"):
import a statement, list imports and lines, work a line, the tie-out and closing a period.
Each change goes through `admin.actions.statements` (validated, audited once)."""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.actions import statements as actions
from admin.api import query_limit
from admin.errors import InvalidError, QueryError
from admin.shell import actor_of, engine_of, in_thread, json_body, settings_of
from ledger.db import read_session, write_session
from ledger.errors import NumberInputError
from ledger.models import StatementImport
from ledger.money import whole_number_from_text
from ledger.queries import MAX_ROW_ID, decode_cursor, encode_cursor
from ledger.statement_lines import (
    DEFAULT_WALLET,
    LINE_STATES,
    LineQuery,
    find_account,
    list_lines,
)
from ledger.types import takes_text, utcnow
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import parse_day
from statements.facts import AccountKind
from statements.formats import StatementFormat
from statements.mapping import builtin_mappings
from statements.matching import DEFAULT_DATE_WINDOW
from web.errors import MalformedFormError
from web.forms import media_type
from web.upload import MULTIPART, read_upload, receive_file

IMPORT_CURSOR = "si"
DEFAULT_MAX_BYTES = 200_000_000
_TRUE = {"1", "true", "yes"}


_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]")


def _safe_name(filename: str | None) -> str:
    """The sender's file name without folders or unusual characters ("upload" without one)."""
    base = os.path.basename((filename or "").replace("\\", "/"))
    safe = _UNSAFE.sub("_", base).strip(" .")[:100]
    return safe if safe not in ("", "part") else "upload"


def _window(request: Request) -> dt.timedelta:
    window: dt.timedelta = getattr(
        settings_of(request), "statement_date_window", DEFAULT_DATE_WINDOW
    )
    return window


def _max_bytes(request: Request) -> int:
    return int(getattr(settings_of(request), "statement_max_bytes", DEFAULT_MAX_BYTES))


def _text(query: Any, name: str, *, default: str | None = None) -> str | None:
    value = query.get(name) or default
    if value is not None and (len(value) > 200 or not takes_text(value)):
        raise QueryError(name, "is not a usable value")
    return value


def _choice(query: Any, name: str, choices: Any, default: str | None = None) -> str | None:
    value = _text(query, name, default=default)
    if value is not None and value not in {str(c) for c in choices}:
        raise QueryError(name, f"must be one of {', '.join(str(c) for c in choices)}")
    return value


def _day(query: Any, name: str) -> dt.date | None:
    value = _text(query, name)
    if value is None:
        return None
    try:
        return parse_day(value, option=name)
    except PeriodError:
        raise QueryError(name, "must be a day, YYYY-MM-DD") from None


async def post_statement(request: Request) -> Response:
    """`POST /api/statements?account=&kind=&format=&mapping=&skip_invalid=`: the statement
    file as the body (or the multipart part `file`); 201 with the import summary, 413 over
    PAYRECON_STATEMENT_MAX_BYTES (counted as it arrives), 422 with every invalid line."""
    query = request.query_params
    account = _text(query, "account", default=DEFAULT_WALLET) or DEFAULT_WALLET
    kind = _choice(query, "kind", AccountKind)
    fmt = _choice(query, "format", StatementFormat, default="auto") or "auto"
    mapping = _text(query, "mapping")
    if mapping is not None and mapping not in builtin_mappings():
        # A mapping FILE is for the command line: the API never reads a path it is sent.
        raise QueryError("mapping", f"must be a built-in mapping: {', '.join(builtin_mappings())}")
    skip_invalid = (query.get("skip_invalid") or "").lower() in _TRUE
    limit = _max_bytes(request)
    multipart = media_type(request) == MULTIPART
    actor, window, engine = actor_of(request), _window(request), engine_of(request)
    with tempfile.TemporaryDirectory(prefix="payrecon-statement-") as folder:
        # The import records the file's name: the sender's (made safe for a file system),
        # else "upload".
        if multipart:
            upload = await read_upload(request, Path(folder) / "part", limit=limit)
            if upload.path is None:
                raise MalformedFormError("the multipart body has no part named 'file'")
            path = upload.path.rename(Path(folder) / _safe_name(upload.file_name))
            received = upload.size
        else:
            path = Path(folder) / "upload"
            received = await receive_file(request, path, limit)
        if received == 0:
            raise InvalidError("file", "the file is empty: send the statement")
        name = path.name

        def store() -> dict[str, Any]:
            with write_session(engine) as session:
                summary = actions.import_statement(
                    session,
                    actor,
                    path,
                    account=account,
                    kind=kind,
                    format=fmt,
                    mapping=mapping,
                    skip_invalid=skip_invalid,
                    file_name=name,
                    window=window,
                    max_bytes=limit,
                    now=utcnow(),
                )
                return summary.to_json()

        return JSONResponse(await in_thread(store), status_code=201)


def _import_record(row: StatementImport, names: dict[int, str]) -> dict[str, Any]:
    def day(value: dt.date | None) -> str | None:
        return None if value is None else value.isoformat()

    return {
        "id": row.id,
        "account": names.get(row.account_id, ""),
        "file_name": row.file_name,
        "format": row.format,
        "mapping": row.mapping,
        "sha256": row.sha256,
        "size": row.size,
        "imported_by": row.imported_by,
        "imported_at": row.imported_at.isoformat().replace("+00:00", "Z"),
        "read": row.read,
        "new": row.new,
        "already_known": row.already_known,
        "invalid": row.invalid,
        "matched": row.matched,
        "suggested": row.suggested,
        "unmatched": row.unmatched,
        "first_date": day(row.first_date),
        "last_date": day(row.last_date),
        "opening_balance": row.opening_balance,
        "closing_balance": row.closing_balance,
    }


def _cursor(query: Any, kind: str) -> int | None:
    cursor = query.get("cursor") or None
    if cursor is None:
        return None
    try:
        return decode_cursor(cursor, kind=kind)
    except ValueError:
        raise QueryError("cursor", "is not a cursor this API gave out") from None


def _account_id(session: Session, name: str | None) -> int | None:
    if name is None:
        return None
    found = find_account(session, name)
    if found is None:
        # An account nobody imported has nothing to list (a filter, not a lookup).
        return -1
    return found.id


async def list_imports(request: Request) -> Response:
    """`GET /api/statements?account=&limit=&cursor=`: the imports, newest first."""
    query = request.query_params
    account = _text(query, "account")
    limit = query_limit(query)
    before = _cursor(query, IMPORT_CURSOR)

    def load() -> dict[str, Any]:
        from ledger.models import StatementAccount

        with read_session(engine_of(request)) as session:
            names = {
                row[0]: row[1]
                for row in session.execute(select(StatementAccount.id, StatementAccount.name))  # type: ignore[call-overload]
            }
            statement = select(StatementImport).order_by(col(StatementImport.id).desc())
            account_id = _account_id(session, account)
            if account_id is not None:
                statement = statement.where(col(StatementImport.account_id) == account_id)
            if before is not None:
                statement = statement.where(col(StatementImport.id) < before)
            rows = list(session.execute(statement.limit(limit + 1)).scalars())
            more = len(rows) > limit
            rows = rows[:limit]
            last = rows[-1].id if rows and more else None
            return {
                "items": [_import_record(row, names) for row in rows],
                "next_cursor": None if last is None else encode_cursor(last, kind=IMPORT_CURSOR),
            }

    return JSONResponse(await in_thread(load))


async def list_statement_lines(request: Request) -> Response:
    """`GET /api/statements/lines?account=&state=&since=&until=&limit=&cursor=`: oldest
    first."""
    query = request.query_params
    account = _text(query, "account")
    state = _choice(query, "state", LINE_STATES)
    since, until = _day(query, "since"), _day(query, "until")
    if since is not None and until is not None and until < since:
        raise QueryError("until", "is before since")
    limit = query_limit(query)
    cursor = query.get("cursor") or None
    if cursor is not None:
        _cursor(query, "sl")

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session:
            where = LineQuery(_account_id(session, account), state, since, until, limit, cursor)
            page = list_lines(session, where)
            return {"items": page.items, "next_cursor": page.next_cursor}

    return JSONResponse(await in_thread(load))


def _line_id(request: Request) -> int:
    try:
        return whole_number_from_text(request.path_params["id"], minimum=1, maximum=MAX_ROW_ID)
    except NumberInputError as exc:
        raise QueryError("id", str(exc), code="invalid_id") from None


async def match_line(request: Request) -> Response:
    """`POST /api/statements/lines/{id}/match {"transfer"|"collection"|"line"}`; an empty
    object confirms the line's suggestion. 200 with the line as it now is."""
    line_id = _line_id(request)
    body = await json_body(request)
    unknown = sorted(set(body) - {"transfer", "collection", "line"})
    if unknown:
        raise InvalidError(unknown[0], f"unknown field {unknown[0]!r}")
    actor, window = actor_of(request), _window(request)

    def change() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            if not body:
                done = actions.confirm(session, actor, line_id, now=utcnow(), window=window)
            else:
                done = actions.match(
                    session,
                    actor,
                    line_id,
                    transfer=body.get("transfer"),
                    collection=body.get("collection"),
                    line=body.get("line"),
                    now=utcnow(),
                    window=window,
                )
            return done.after

    return JSONResponse(await in_thread(change))


async def unmatch_line(request: Request) -> Response:
    """`POST /api/statements/lines/{id}/unmatch`: 200 with the line, unmatched."""
    line_id = _line_id(request)
    actor, window = actor_of(request), _window(request)

    def change() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            return actions.unmatch(session, actor, line_id, now=utcnow(), window=window).after

    return JSONResponse(await in_thread(change))


async def ignore_line(request: Request) -> Response:
    """`POST /api/statements/lines/{id}/ignore {"as", "note"}`: 200 with the line."""
    line_id = _line_id(request)
    body = await json_body(request)
    actor, window = actor_of(request), _window(request)

    def change() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            return actions.ignore(
                session,
                actor,
                line_id,
                ignored_as=body.get("as"),  # type: ignore[arg-type]
                note=body.get("note"),  # type: ignore[arg-type]
                now=utcnow(),
                window=window,
            ).after

    return JSONResponse(await in_thread(change))


def _tie_out_json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.to_json()
    data["summary"] = result.summary()
    data["explanations"] = [
        {"kind": item.kind, "text": item.text, "amount": item.amount}
        for item in result.explanations()
    ]
    return data


async def get_tie_out(request: Request) -> Response:
    """`GET /api/periods/tie-out?account=&since=&until=`: the contract's keys, plus
    `summary` (the sentence) and `explanations` (each item with its share of the residual)."""
    query = request.query_params
    account = _text(query, "account", default=DEFAULT_WALLET) or DEFAULT_WALLET
    since, until = _day(query, "since"), _day(query, "until")
    if since is None or until is None:
        raise QueryError("since" if since is None else "until", "is required, YYYY-MM-DD")

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session:
            return _tie_out_json(actions.tie_out(session, account, since, until))

    return JSONResponse(await in_thread(load))


async def close_period(request: Request) -> Response:
    """`POST /api/periods/close {"account", "since", "until"}`: the period locked with its
    tie-out as it stands (201, with `lock`)."""
    body = await json_body(request)
    actor = actor_of(request)
    account = body.get("account", DEFAULT_WALLET)

    def change() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            closed = actions.close_period(
                session, actor, account, body.get("since", ""), body.get("until", ""), now=utcnow()
            )
            return {"lock": closed.lock_id, **_tie_out_json(closed.tie_out)}

    return JSONResponse(await in_thread(change), status_code=201)
