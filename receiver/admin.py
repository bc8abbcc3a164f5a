"""The admin API under `/api`: transfers, registration of expected transfers, payouts."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ledger.db import read_session, write_session
from ledger.errors import ConflictError, LedgerError
from ledger.queries import ANY_FINDING, find_transfer, list_transfers, transfer_record
from ledger.types import FindingKind, TransferStatus, utcnow
from receiver.body import read_limited
from receiver.errors import ReceiverError
from receiver.expected import ExpectedInputError, parse_expected, register

MAX_ADMIN_BODY = 64 * 1024


def api_error(status: int, error: str, message: str, **extra: Any) -> JSONResponse:
    """A JSON error in the admin API's shape."""
    return JSONResponse({"status": "error", "error": error, "message": message, **extra}, status)


async def json_body(request: Request) -> dict[str, Any] | JSONResponse:
    """The request's JSON object, or the error response to send instead."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return api_error(415, "unsupported_media_type", "Content-Type must be application/json")
    try:
        raw = await read_limited(request, MAX_ADMIN_BODY)
        body = json.loads(raw)
    except ReceiverError as exc:
        return api_error(exc.status_code, exc.code, exc.message)
    except (ValueError, RecursionError):
        return api_error(400, "malformed_json", "body is not JSON")
    try:
        # JSON may escape half a surrogate pair ("\ud800"), which is no character at all: no
        # database column stores it and no answer could echo it back.
        json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return api_error(400, "malformed_json", "body has an unpaired surrogate escape")
    if not isinstance(body, dict):
        return api_error(422, "invalid", "body must be a JSON object")
    return body


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def get_transfer(request: Request) -> Response:
    """`GET /api/transfers/{reference}` (merchant's or provider's reference)."""
    reference = request.path_params["reference"]

    def load() -> dict[str, Any] | None:
        with read_session(_engine(request)) as session:
            transfer = find_transfer(session, reference)
            return None if transfer is None else transfer_record(session, transfer)

    record = await run_in_threadpool(load)
    if record is None:
        return api_error(404, "not_found", f"no transfer with reference {reference!r}")
    return JSONResponse(record)


def _parse_since(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("since must be an ISO-8601 date or time") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value


async def list_transfer_page(request: Request) -> Response:
    """`GET /api/transfers?status=&finding=&since=&limit=&cursor=`."""
    query = request.query_params
    try:
        status = TransferStatus(query["status"]) if query.get("status") else None
        limit = int(query.get("limit", "50"))
        if not 1 <= limit <= 500:
            raise ValueError("limit must be from 1 to 500")
        since = _parse_since(query.get("since"))
        cursor = query.get("cursor") or None
        finding = query.get("finding") or None
        if finding not in (None, ANY_FINDING):
            finding = FindingKind(finding).value  # ValueError names the unknown kind
    except ValueError as exc:
        return api_error(400, "invalid_query", str(exc))

    def load() -> dict[str, Any]:
        with read_session(_engine(request)) as session:
            page = list_transfers(
                session, status=status, finding=finding, since=since, limit=limit, cursor=cursor
            )
            return {
                "items": [transfer_record(session, t) for t in page.items],
                "next_cursor": page.next_cursor,
            }

    try:
        return JSONResponse(await run_in_threadpool(load))
    except ValueError as exc:  # a cursor that is not ours
        return api_error(400, "invalid_query", str(exc))


async def post_expected(request: Request) -> Response:
    """`POST /api/transfers/expected`: 201 new, 200 identical, 409 different."""
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    try:
        expected = parse_expected(body)
    except ExpectedInputError as exc:
        return api_error(422, "invalid", exc.message, field=exc.field)

    def store() -> tuple[dict[str, Any], bool]:
        with write_session(_engine(request)) as session:
            return register(session, expected, now=utcnow())

    try:
        record, created = await run_in_threadpool(store)
    except ConflictError as exc:
        return api_error(409, "conflict", str(exc))
    except LedgerError as exc:
        return api_error(503, "unavailable", f"ledger unavailable: {exc}")
    return JSONResponse(record, status_code=201 if created else 200)


_PAYOUT_FIELDS = ("amount", "bank_code", "account_number", "reference")


async def post_payout(request: Request) -> Response:
    """`POST /api/transfers`: name enquiry then initiation (as `payrecon transfer send`); 201."""
    from reconcile.errors import PayoutError
    from reconcile.payouts import PayoutRequest, send_payout

    factory = request.app.state.payout_client_factory
    if factory is None:
        return api_error(
            503,
            "provider_not_configured",
            "payouts need PAYRECON_PROVIDER_BASE_URL and PAYRECON_PROVIDER_SECRET_KEY",
        )
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    missing = [name for name in _PAYOUT_FIELDS if name not in body]
    if missing:
        return api_error(422, "invalid", f"{missing[0]} is required", field=missing[0])
    amount = body["amount"]
    if isinstance(amount, bool) or not isinstance(amount, int):
        return api_error(422, "invalid", "amount must be an integer number of kobo", field="amount")
    for name in ("bank_code", "account_number", "reference"):
        if not isinstance(body[name], str):
            return api_error(422, "invalid", f"{name} must be a string", field=name)
    payout = PayoutRequest(amount, body["bank_code"], body["account_number"], body["reference"])

    def pay() -> dict[str, Any]:
        with factory() as client:
            result = send_payout(_engine(request), client, payout, now=utcnow())
        with read_session(_engine(request)) as session:
            transfer = find_transfer(session, result.reference)
            assert transfer is not None
            return {"created": result.created, **transfer_record(session, transfer)}

    try:
        record = await run_in_threadpool(pay)
    except PayoutError as exc:
        return api_error(exc.kind.http_status, exc.kind.value, str(exc), reference=payout.reference)
    except LedgerError as exc:
        return api_error(503, "unavailable", f"ledger unavailable: {exc}")
    created = record.pop("created")
    return JSONResponse(record, status_code=201 if created else 200)
