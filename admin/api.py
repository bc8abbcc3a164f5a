"""The admin API under `/api`: transfers, registration of expected transfers, payouts."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.errors import ExpectedInputError, QueryError
from admin.expected import parse_expected, register
from admin.identity import audit
from admin.unavailable import DATABASE_ERRORS, database_unavailable
from ledger.audit import AuditAction
from ledger.db import read_session, write_session
from ledger.errors import ConflictError, NumberInputError
from ledger.money import kobo_from_json, whole_number_from_text
from ledger.queries import (
    ANY_FINDING,
    MAX_PAGE,
    decode_cursor,
    find_transfer,
    list_transfers,
    transfer_record,
)
from ledger.types import FindingKind, TransferStatus, takes_text, utcnow
from payments.errors import PayoutAccessDeniedError, PayoutError, PayoutErrorKind
from payments.payouts import PayoutRequest, send_payout
from web.answers import json_error, web_error
from web.body import read_body
from web.errors import WebError
from web.forms import media_type
from web.jsonbody import parse_json

MAX_ADMIN_BODY = 64 * 1024
# Longer than any reference (100) or provider reference: a path past it finds nothing.
MAX_PATH_REFERENCE = 200
DEFAULT_PAGE = 50


async def json_body(request: Request) -> dict[str, Any] | JSONResponse:
    """The request's JSON object, or the error response to send instead."""
    if media_type(request) != "application/json":
        return json_error(415, "unsupported_media_type", "Content-Type must be application/json")
    try:
        body = parse_json(await read_body(request, MAX_ADMIN_BODY))
    except WebError as exc:
        return web_error(exc)
    if not isinstance(body, dict):
        return json_error(422, "invalid", "body must be a JSON object")
    return body


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def get_transfer(request: Request) -> Response:
    """`GET /api/transfers/{reference}` (merchant's or provider's reference)."""
    return await get_record(request, find=find_transfer, record=transfer_record, noun="transfer")


async def get_record(
    request: Request,
    *,
    find: Callable[[Session, str], Any],
    record: Callable[[Session, Any], dict[str, Any]],
    noun: str,
) -> Response:
    """The record of the row `find` gives for the path's `{reference}`, or 404."""
    reference = request.path_params["reference"]
    if not takes_text(reference) or len(reference) > MAX_PATH_REFERENCE:
        # A NUL no column can hold (PostgreSQL refuses it in a query), or longer than any
        # reference: no row has it.
        return json_error(404, "not_found", f"no {noun} with that reference")

    def load() -> dict[str, Any] | None:
        with read_session(_engine(request)) as session:
            row = find(session, reference)
            return None if row is None else record(session, row)

    try:
        found = await run_in_threadpool(load)
    except DATABASE_ERRORS:
        return database_unavailable()
    if found is None:
        return json_error(404, "not_found", f"no {noun} with reference {reference!r}")
    return JSONResponse(found)


def parse_instant(text: str, *, parameter: str) -> dt.datetime:
    """An ISO-8601 date or time from a query string, as aware UTC (naive means UTC)."""
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise QueryError(parameter, "must be an ISO-8601 date or time") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    try:
        # 0001-01-01T00:00+14:00 is a valid ISO time whose UTC instant is before year 1.
        return value.astimezone(dt.UTC)
    except OverflowError:
        raise QueryError(parameter, f"{text!r} is out of range (years 1 to 9999 UTC)") from None


def query_limit(query: Any) -> int:
    """The `limit` of a list query: 1 to MAX_PAGE, DEFAULT_PAGE when absent."""
    try:
        return whole_number_from_text(
            query.get("limit", str(DEFAULT_PAGE)), minimum=1, maximum=MAX_PAGE
        )
    except NumberInputError as exc:
        raise QueryError("limit", str(exc)) from None


def query_since(query: Any) -> dt.datetime | None:
    """The `since` of a list query as aware UTC, or None when absent."""
    since = query.get("since") or None
    return None if since is None else parse_instant(since, parameter="since")


def query_cursor(query: Any, decode: Callable[[str], object]) -> str | None:
    """The `cursor` of a list query once `decode` (which raises ValueError) accepts it."""
    cursor = query.get("cursor") or None
    if cursor is not None:
        try:
            decode(cursor)
        except ValueError:
            raise QueryError("cursor", "is not a cursor this API gave out") from None
    return cursor


@dataclass(frozen=True)
class TransferQuery:
    """The filters of `GET /api/transfers`, checked."""

    status: TransferStatus | None
    finding: str | None
    since: dt.datetime | None
    limit: int
    cursor: str | None


def parse_transfer_query(query: Any, *, cursor_kind: str = "t") -> TransferQuery:
    """`status`, `finding`, `since`, `limit`, `cursor` (of `cursor_kind`: `t` transfers, `c`
    collections); QueryError naming the first bad one."""
    raw_status = query.get("status") or None
    try:
        status = None if raw_status is None else TransferStatus(raw_status)
    except ValueError:
        raise QueryError("status", f"must be one of {', '.join(TransferStatus)}") from None
    finding = query.get("finding") or None
    if finding not in (None, ANY_FINDING, *FindingKind):
        raise QueryError("finding", f"must be {ANY_FINDING} or a finding kind")
    return TransferQuery(
        status=status,
        finding=finding,
        since=query_since(query),
        limit=query_limit(query),
        cursor=query_cursor(query, lambda cursor: decode_cursor(cursor, kind=cursor_kind)),
    )


async def list_transfer_page(request: Request) -> Response:
    """`GET /api/transfers?status=&finding=&since=&limit=&cursor=`."""
    return await list_page(request, lister=list_transfers, record=transfer_record)


async def list_page(
    request: Request,
    *,
    lister: Callable[..., Any],
    record: Callable[[Session, Any], dict[str, Any]],
    cursor_kind: str = "t",
) -> Response:
    """`{"items", "next_cursor"}` of the page `lister` gives for the checked query string
    (`status`, `finding`, `since`, `limit`, `cursor` of `cursor_kind`)."""
    try:
        query = parse_transfer_query(request.query_params, cursor_kind=cursor_kind)
    except QueryError as exc:
        return json_error(400, "invalid_query", str(exc), parameter=exc.parameter)

    def load() -> dict[str, Any]:
        with read_session(_engine(request)) as session:
            page = lister(
                session,
                status=query.status,
                finding=query.finding,
                since=query.since,
                limit=query.limit,
                cursor=query.cursor,
            )
            return {
                "items": [record(session, row) for row in page.items],
                "next_cursor": page.next_cursor,
            }

    try:
        return JSONResponse(await run_in_threadpool(load))
    except DATABASE_ERRORS:
        return database_unavailable()


async def post_expected(request: Request) -> Response:
    """`POST /api/transfers/expected`: 201 new, 200 identical, 409 different."""
    return await post_registration(
        request,
        parse=parse_expected,
        register=register,
        action=AuditAction.EXPECTED_REGISTER,
        subject="transfer",
    )


async def post_registration(
    request: Request,
    *,
    parse: Callable[[dict[str, Any]], Any],
    register: Callable[..., tuple[dict[str, Any], bool]],
    action: AuditAction,
    subject: str,
) -> Response:
    """Register what the body describes (checked by `parse`): 201 new, 200 identical, 409
    different, 422 malformed; a new one is audited as `action` on `subject:REFERENCE`."""
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    try:
        expected = parse(body)
    except ExpectedInputError as exc:
        return json_error(422, "invalid", exc.message, field=exc.field)

    def store() -> tuple[dict[str, Any], bool]:
        with write_session(_engine(request)) as session:
            record, created = register(session, expected, now=utcnow())
            if created:
                audit(request, session, action, f"{subject}:{record['reference']}", None)
            return record, created

    try:
        found, created = await run_in_threadpool(store)
    except ConflictError as exc:
        return json_error(409, "conflict", str(exc))
    except DATABASE_ERRORS:
        return database_unavailable()
    return JSONResponse(found, status_code=201 if created else 200)


_PAYOUT_FIELDS = ("amount", "bank_code", "account_number", "reference")
# The answer's status for each way a payout fails (payments/ carries no HTTP codes).
PAYOUT_STATUS = {
    PayoutErrorKind.INVALID: 422,
    PayoutErrorKind.ENQUIRY_FAILED: 422,
    PayoutErrorKind.DUPLICATE: 409,
    PayoutErrorKind.REJECTED: 422,
    PayoutErrorKind.UNAVAILABLE: 503,
    PayoutErrorKind.AUTH: 502,  # our key, not the caller's fault
    PayoutErrorKind.PENDING: 202,  # accepted for resolution by the reconciler
}


def payout_status(exc: PayoutError) -> int:
    """The HTTP status `POST /api/transfers` answers for a payout error."""
    if isinstance(exc, PayoutAccessDeniedError):
        return 403  # the provider's own answer to a server off its IP whitelist
    return PAYOUT_STATUS[exc.kind]


async def post_payout(request: Request) -> Response:
    """`POST /api/transfers`: name enquiry then initiation (as `payrecon transfer send`); 201."""
    client = request.app.state.payout_client
    if client is None:
        return json_error(
            503,
            "provider_not_configured",
            "payouts need PAYRECON_PROVIDER_BASE_URL and PAYRECON_PROVIDER_SECRET_KEY",
        )
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    missing = [name for name in _PAYOUT_FIELDS if name not in body]
    if missing:
        return json_error(422, "invalid", f"{missing[0]} is required", field=missing[0])
    try:
        amount = kobo_from_json(body["amount"], minimum=1)
    except NumberInputError as exc:
        return json_error(422, "invalid", f"amount {exc}", field="amount")
    for name in ("bank_code", "account_number", "reference"):
        if not isinstance(body[name], str):
            return json_error(422, "invalid", f"{name} must be a string", field=name)
    payout = PayoutRequest(amount, body["bank_code"], body["account_number"], body["reference"])

    def pay() -> dict[str, Any]:
        def audited(session: Session) -> None:
            detail = f"amount {payout.amount} kobo to {payout.bank_code}/{payout.account_number}"
            audit(
                request, session, AuditAction.PAYOUT_CREATE, f"transfer:{payout.reference}", detail
            )

        result = send_payout(_engine(request), client, payout, now=utcnow(), on_intent=audited)
        with read_session(_engine(request)) as session:
            transfer = find_transfer(session, result.reference)
            assert transfer is not None
            return {"created": result.created, **transfer_record(session, transfer)}

    try:
        record = await run_in_threadpool(pay)
    except PayoutError as exc:
        return json_error(payout_status(exc), exc.kind.value, str(exc), reference=payout.reference)
    except DATABASE_ERRORS:
        return database_unavailable()
    created = record.pop("created")
    return JSONResponse(record, status_code=201 if created else 200)
