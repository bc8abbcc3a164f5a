"""The endpoints page (relay endpoints, their recent deliveries, retry and replay) and the
audit log page."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from admin.actions import relay as actions
from admin.actions.relay import ReplayFilters
from admin.console.findings_page import form_fields
from admin.console.pages import PAGE_SIZE
from admin.console.render import back_to, page_link, render
from admin.errors import ConflictError, InvalidError, NotFoundError
from admin.shell import actor_of, engine_of, in_thread
from ledger.audit import AuditAction, AuditQuery, decode_audit_cursor, list_entries
from ledger.db import read_session, write_session
from ledger.events.types import RelayEventType
from ledger.types import takes_text, utcnow
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import lagos_midnight_utc, parse_day
from relay import endpoints as endpoint_ops
from relay import queries

ENDPOINTS = "/console/endpoints"
AUDIT = "/console/audit"
RECENT = 10


async def endpoints_page(request: Request) -> Response:
    """`/console/endpoints`: every endpoint with its pending count and newest deliveries."""

    def load() -> list[dict[str, Any]]:
        with read_session(engine_of(request)) as session:
            endpoints = [e for e in endpoint_ops.listed(session) if e.removed_at is None]
            records = queries.endpoint_records(session, endpoints)
            for record in records:
                record["recent"] = queries.recent_deliveries(session, record["id"], limit=RECENT)
            return records

    endpoints = await in_thread(load)
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
    actor = actor_of(request)

    def store() -> None:
        with write_session(engine_of(request)) as session:
            actions.retry_delivery(session, actor, delivery_id, now=utcnow())

    try:
        await in_thread(store)
    except NotFoundError:
        return back_to(ENDPOINTS, error="not_found")
    except ConflictError:
        return back_to(ENDPOINTS, error="not_retryable")
    return back_to(ENDPOINTS, done="retried")


async def replay(request: Request) -> Response:
    """POST `/console/endpoints/{id}/replay` (`type`, `since` day, `failed_only`)."""
    fields = await form_fields(request)
    endpoint_id = _number(request.path_params["id"])
    if endpoint_id is None:
        return back_to(ENDPOINTS, error="bad_endpoint_id")
    filters = ReplayFilters(
        endpoint_id=endpoint_id,
        type=(fields.get("type") or [""])[-1] or None,
        since=(fields.get("since") or [""])[-1].strip() or None,
        failed_only=bool(fields.get("failed_only")),
    )
    actor = actor_of(request)

    def store() -> int:
        with write_session(engine_of(request)) as session:
            return actions.replay(session, actor, filters, now=utcnow())

    try:
        await in_thread(store)
    except InvalidError:
        return back_to(ENDPOINTS, error="bad_replay")
    except NotFoundError:
        return back_to(ENDPOINTS, error="not_found")
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
        with read_session(engine_of(request)) as session:
            return list_entries(session, audit_query)

    page = await in_thread(load)
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
