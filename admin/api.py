"""The admin API under `/api`: transfers, registration of expected transfers, payouts."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.actions import payments
from admin.actions.payments import PAYOUT_STATUS, payout_status
from admin.errors import InvalidError, NotFoundError, QueryError, UnavailableError
from admin.expected import parse_expected
from admin.shell import actor_of, engine_of, in_thread, json_body
from ledger.db import read_session, write_session
from ledger.errors import NumberInputError
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
from payments.errors import PayoutError
from payments.payouts import PayoutRequest

__all__ = ["PAYOUT_STATUS", "json_body", "payout_status"]

# Longer than any reference (100) or provider reference: a path past it finds nothing.
MAX_PATH_REFERENCE = 200
DEFAULT_PAGE = 50


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
        raise NotFoundError(f"no {noun} with that reference")

    def load() -> dict[str, Any] | None:
        with read_session(engine_of(request)) as session:
            row = find(session, reference)
            return None if row is None else record(session, row)

    found = await in_thread(load)
    if found is None:
        raise NotFoundError(f"no {noun} with reference {reference!r}")
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
    query = parse_transfer_query(request.query_params, cursor_kind=cursor_kind)

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session:
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

    return JSONResponse(await in_thread(load))


async def post_expected(request: Request) -> Response:
    """`POST /api/transfers/expected`: 201 new, 200 identical, 409 different."""
    return await post_registration(request, parse=parse_expected, registry=payments.TRANSFERS)


async def post_registration(
    request: Request, *, parse: Callable[[dict[str, Any]], Any], registry: payments.Registry
) -> Response:
    """Register what the body describes (checked by `parse`): 201 new, 200 identical, 409
    different, 422 malformed (admin.actions.payments.register)."""
    expected = parse(await json_body(request))
    actor = actor_of(request)

    def store() -> tuple[dict[str, Any], bool]:
        with write_session(engine_of(request)) as session:
            return payments.register(session, actor, registry, expected, now=utcnow())

    found, created = await in_thread(store)
    return JSONResponse(found, status_code=201 if created else 200)


_PAYOUT_FIELDS = ("amount", "bank_code", "account_number", "reference")


def provider_client(request: Request, what: str) -> Any:
    """The app's provider client; UnavailableError naming the settings `what` needs."""
    client = request.app.state.payout_client
    if client is None:
        raise UnavailableError(
            f"{what} need PAYRECON_PROVIDER_BASE_URL and PAYRECON_PROVIDER_SECRET_KEY",
            code="provider_not_configured",
        )
    return client


async def post_payout(request: Request) -> Response:
    """`POST /api/transfers`: name enquiry then initiation (as `payrecon transfer send`); 201."""
    client = provider_client(request, "payouts")
    body = await json_body(request)
    missing = [name for name in _PAYOUT_FIELDS if name not in body]
    if missing:
        raise InvalidError(missing[0], f"{missing[0]} is required")
    try:
        amount = kobo_from_json(body["amount"], minimum=1)
    except NumberInputError as exc:
        raise InvalidError("amount", f"amount {exc}") from None
    for name in ("bank_code", "account_number", "reference"):
        if not isinstance(body[name], str):
            raise InvalidError(name, f"{name} must be a string")
    payout = PayoutRequest(amount, body["bank_code"], body["account_number"], body["reference"])
    actor = actor_of(request)

    def pay() -> dict[str, Any]:
        result = payments.pay_out(engine_of(request), client, actor, payout, now=utcnow())
        with read_session(engine_of(request)) as session:
            transfer = find_transfer(session, result.reference)
            assert transfer is not None
            return {"created": result.created, **transfer_record(session, transfer)}

    try:
        record = await in_thread(pay)
    except PayoutError as exc:
        raise payments.refused(exc, payout.reference) from None
    created = record.pop("created")
    return JSONResponse(record, status_code=201 if created else 200)
