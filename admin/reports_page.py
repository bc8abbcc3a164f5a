"""The finance report over HTTP: the HTML page, the JSON summary and acknowledging a finding.

Plain handlers; `admin.routes` mounts them behind their roles (`admin.identity`, which also
refuses cross-origin POSTs and checks CSRF tokens), so nothing here authenticates.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import urlencode

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from admin.identity import PAGE_POLICY, Role, audit, csrf_token, current_operator, wants_html
from admin.unavailable import DATABASE_ERRORS, database_unavailable
from ledger.audit import AuditAction
from ledger.db import read_session, write_session
from ledger.errors import NoteError
from ledger.events.findings import acknowledge_finding
from ledger.findings import MAX_NOTE_CHARS, check_note
from ledger.queries import MAX_ROW_ID
from ledger.types import utcnow
from reconcile.checks import DEFAULT_STALE_AFTER
from reconcile.reports.errors import PeriodError
from reconcile.reports.html import PageForms, render_html
from reconcile.reports.period import Period, parse_period
from reconcile.reports.summary import build_summary, compute_report
from web.answers import RETRY_AFTER, json_error
from web.errors import WebError
from web.forms import read_form


def _page_error(
    request: Request, status: int, error: str, message: str, *, refused: str | None = None
) -> Response:
    """An error of the HTML page or of its forms: a small page for a browser, the API's JSON
    for a client. `refused` names what a form asked for (then the link leads back to the page)."""
    unavailable = status == 503
    if not wants_html(request):
        return database_unavailable() if unavailable else json_error(status, error, message)
    path = html.escape(request.url.path)
    if refused is not None:
        back = html.escape(_back_to_page(request, Period()))
        title, link = f"Cannot {refused}", f'<a href="{back}">Back to the report</a>'
    elif unavailable:
        query = html.escape(request.url.query)
        title, link = "Report unavailable", f'<a href="{path}?{query}">Try again</a>'
    else:
        title, link = "Cannot show this report", f'<a href="{path}">Show the whole ledger</a>'

    page = (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>"
        '<meta name=viewport content="width=device-width, initial-scale=1"></head>'
        f"<body><h1>{title}</h1><p>{html.escape(message)}</p><p>{link}</p></body></html>"
    )
    headers = {"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-store"}
    return HTMLResponse(page, status, headers={**headers, **(RETRY_AFTER if unavailable else {})})


ACK = "acknowledge this finding"
# The page and the JSON summary list the first 100 open findings and stale transfers, with
# whole counts (PRODUCT.md Robustness rules: bounded answers); report files list everything.
LIST_LIMIT = 100


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def _stale_after(request: Request) -> int:
    settings = getattr(request.app.state, "settings", None)
    return int(getattr(settings, "stale_after", DEFAULT_STALE_AFTER))


def _period(values: Any) -> Period:
    return parse_period(
        values.get("since") or None, values.get("until") or None, names=("since", "until")
    )


async def summary_api(request: Request) -> Response:
    """`GET /api/reports/summary?since=&until=`: the same JSON as `report --format json`."""
    try:
        period = _period(request.query_params)
    except PeriodError as exc:
        return json_error(400, "invalid_period", str(exc))

    def load() -> dict[str, Any]:
        with read_session(_engine(request)) as session:
            return build_summary(
                session, period, stale_after=_stale_after(request), limit=LIST_LIMIT
            )

    try:
        summary = await run_in_threadpool(load)
    except DATABASE_ERRORS:
        return database_unavailable()
    return JSONResponse(summary)


async def reports_page(request: Request) -> Response:
    """`GET /reports?since=&until=`: the HTML report with a period picker and ack forms."""
    try:
        period = _period(request.query_params)
    except PeriodError as exc:
        return _page_error(request, 400, "invalid_period", str(exc))
    now = utcnow()
    # Acknowledge forms only for an operator who may acknowledge (a viewer reads the page).
    forms = PageForms(
        base_path=request.url.path,
        csrf_token=csrf_token(request),
        can_acknowledge=current_operator(request).role.allows(Role.FINANCE),
    )

    def render() -> str:
        with read_session(_engine(request)) as session:
            report = compute_report(
                session, period, stale_after=_stale_after(request), now=now, limit=LIST_LIMIT
            )
        return render_html(report, now=now, forms=forms)

    try:
        page = await run_in_threadpool(render)
    except DATABASE_ERRORS:
        return _page_error(
            request, 503, "database_unavailable", "the ledger database is not answering"
        )
    return HTMLResponse(
        page, headers={"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-store"}
    )


def _back_to_page(request: Request, period: Period) -> str:
    # /reports/findings/{id}/ack → /reports, wherever the app is mounted.
    path = request.url.path
    base = path[: path.rfind("/findings/")] or "/reports"
    query = urlencode({k: v for k, v in period.as_dict().items() if v})
    return f"{base}?{query}" if query else base


async def acknowledge(request: Request) -> Response:
    """`POST /reports/findings/{id}/ack` with a `note`: acknowledge; 303 back to the page."""
    finding_id = int(request.path_params["id"])
    if finding_id > MAX_ROW_ID:
        # Past any row id the database can hold (2^63 - 1): no such finding.
        return _page_error(
            request, 404, "not_found", f"no finding with id {finding_id}", refused=ACK
        )
    try:
        form = await read_form(request)
    except WebError as exc:
        return _page_error(request, exc.status_code, exc.code, exc.message, refused=ACK)
    note = form.get("note", "").strip()
    if not note:
        return _page_error(
            request,
            400,
            "note_required",
            "a note is required to acknowledge a finding",
            refused=ACK,
        )
    if len(note) > MAX_NOTE_CHARS:
        return _page_error(
            request,
            400,
            "note_too_long",
            f"the note is limited to {MAX_NOTE_CHARS} characters",
            refused=ACK,
        )
    try:
        note = check_note(note)
    except NoteError as exc:
        return _page_error(request, 400, "invalid_note", str(exc), refused=ACK)
    try:
        period = _period(form)
    except PeriodError:
        period = Period()  # only decides where to go back to; never worth refusing the ack

    def write() -> bool:
        with write_session(_engine(request)) as session:
            found = acknowledge_finding(session, finding_id=finding_id, note=note, now=utcnow())
            if found is not None:
                audit(request, session, AuditAction.FINDING_ACK, f"finding:{finding_id}", note)
            return found is not None

    try:
        found = await run_in_threadpool(write)
    except DATABASE_ERRORS:
        return _page_error(
            request,
            503,
            "database_unavailable",
            "the ledger database is not answering",
            refused=ACK,
        )
    if not found:
        return _page_error(
            request, 404, "not_found", f"no finding with id {finding_id}", refused=ACK
        )
    return RedirectResponse(_back_to_page(request, period), status_code=303)
