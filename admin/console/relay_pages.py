"""The endpoints page (relay endpoints, their recent deliveries, retry and replay) and the
audit log page."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from admin.console.findings_page import form_fields
from admin.console.pages import PAGE_SIZE, unavailable
from admin.console.render import back_to, page_link, render
from admin.identity import audit
from admin.unavailable import DATABASE_ERRORS
from ledger.audit import AuditAction, AuditQuery, decode_audit_cursor, list_entries
from ledger.db import read_session, write_session
from ledger.events.types import RelayEventType
from ledger.types import takes_text, utcnow
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import lagos_midnight_utc, parse_day
from relay import endpoints as endpoint_ops
from relay import queries
from relay.errors import DeliveryStateError, EndpointNotFoundError
from relay.replay import queue_again

ENDPOINTS = "/console/endpoints"
AUDIT = "/console/audit"
RECENT = 10


async def endpoints_page(request: Request) -> Response:
    """`/console/endpoints`: every endpoint with its pending count and newest deliveries."""

    def load() -> list[dict[str, Any]]:
        with read_session(request.app.state.engine) as session:
            endpoints = [e for e in endpoint_ops.listed(session) if e.removed_at is None]
            records = queries.endpoint_records(session, endpoints)
            for record in records:
                record["recent"] = queries.recent_deliveries(session, record["id"], limit=RECENT)
            return records

    try:
        endpoints = await run_in_threadpool(load)
    except DATABASE_ERRORS:
        return unavailable()
    return render(
        request,
        "endpoints.html",
        title="Relay endpoints",
        endpoints=endpoints,
        types=list(RelayEventType),
    )


def _number(text: str) -> int | None:
    return queries.parse_row_id(text)


async def retry(request: Request) -> Response:
    """POST `/console/deliveries/{id}/retry`: a pending or failed delivery is due now."""
    await form_fields(request)
    delivery_id = _number(request.path_params["id"])
    if delivery_id is None:
        return back_to(ENDPOINTS, error="bad_delivery_id")

    def store() -> None:
        with write_session(request.app.state.engine) as session:
            queries.retry_delivery(session, delivery_id, now=utcnow())
            audit(request, session, AuditAction.DELIVERY_RETRY, f"delivery:{delivery_id}")

    try:
        await run_in_threadpool(store)
    except EndpointNotFoundError:
        return back_to(ENDPOINTS, error="not_found")
    except DeliveryStateError:
        return back_to(ENDPOINTS, error="not_retryable")
    except DATABASE_ERRORS:
        return unavailable()
    return back_to(ENDPOINTS, done="retried")


async def replay(request: Request) -> Response:
    """POST `/console/endpoints/{id}/replay` (`type`, `since` day, `failed_only`)."""
    fields = await form_fields(request)
    endpoint_id = _number(request.path_params["id"])
    if endpoint_id is None:
        return back_to(ENDPOINTS, error="bad_endpoint_id")
    raw_type = (fields.get("type") or [""])[-1]
    raw_since = (fields.get("since") or [""])[-1].strip()
    failed_only = bool(fields.get("failed_only"))
    try:
        event_type = RelayEventType(raw_type) if raw_type else None
        since = lagos_midnight_utc(parse_day(raw_since, option="since")) if raw_since else None
    except (ValueError, PeriodError):
        return back_to(ENDPOINTS, error="bad_replay")
    detail = f"type={raw_type or 'any'} since={raw_since or 'any'} failed_only={failed_only}"

    def store() -> int:
        with write_session(request.app.state.engine) as session:
            queued = queue_again(
                session,
                now=utcnow(),
                endpoint_id=endpoint_id,
                type=event_type,
                since=since,
                failed_only=failed_only,
            )
            audit(request, session, AuditAction.RELAY_REPLAY, f"endpoint:{endpoint_id}", detail)
            return queued

    try:
        await run_in_threadpool(store)
    except EndpointNotFoundError:
        return back_to(ENDPOINTS, error="not_found")
    except DATABASE_ERRORS:
        return unavailable()
    return back_to(ENDPOINTS, done="replayed")


async def audit_page(request: Request) -> Response:
    """`/console/audit`: the audit log newest first, by operator, action and day."""
    query = request.query_params
    given: dict[str, str | None] = {
        name: (query.get(name) or "").strip() or None
        for name in ("operator", "action", "since", "cursor")
    }
    problems = []
    if given["operator"] and (
        len(given["operator"] or "") > 64 or not takes_text(given["operator"] or "")
    ):
        problems.append("An operator name has at most 64 characters.")
        given["operator"] = None
    if given["action"] not in (None, *AuditAction):
        problems.append("Unknown action.")
        given["action"] = None
    since: dt.datetime | None = None
    if given["since"]:
        try:
            since = lagos_midnight_utc(parse_day(given["since"] or "", option="since"))
        except PeriodError:
            problems.append("The day is a date like 2026-03-01.")
            given["since"] = None
    if given["cursor"]:
        try:
            decode_audit_cursor(given["cursor"] or "")
        except ValueError:
            problems.append("That page link is not valid any more; showing the first page.")
            given["cursor"] = None
    audit_query = AuditQuery(
        operator=given["operator"],
        action=given["action"],
        since=since,
        limit=PAGE_SIZE,
        cursor=given["cursor"],
    )

    def load() -> Any:
        with read_session(request.app.state.engine) as session:
            return list_entries(session, audit_query)

    try:
        page = await run_in_threadpool(load)
    except DATABASE_ERRORS:
        return unavailable()
    return render(
        request,
        "audit.html",
        title="Audit log",
        items=page.items,
        given=given,
        problems=problems,
        actions=list(AuditAction),
        next_link=None
        if page.next_cursor is None
        else page_link(AUDIT, given, cursor=page.next_cursor),
    )
