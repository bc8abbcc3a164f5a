"""The finance report over HTTP: the HTML page, the JSON summary and acknowledging a finding.

Plain handlers; `admin.routes` mounts them behind their roles (`admin.identity`, which also
refuses cross-origin POSTs and checks CSRF tokens), so nothing here authenticates.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from admin import report_files
from admin.actions import findings as actions
from admin.answers import REFUSED
from admin.errors import AdminError, NotFoundError
from admin.identity import PAGE_POLICY, Role, csrf_token, current_operator
from admin.shell import actor_of, engine_of, in_thread, settings_of
from ledger.db import read_session, write_session
from ledger.queries import MAX_ROW_ID
from ledger.types import utcnow
from reconcile.checks import DEFAULT_STALE_AFTER
from reconcile.reports.errors import PeriodError
from reconcile.reports.html import PageForms, render_html
from reconcile.reports.period import Period, parse_period
from reconcile.reports.summary import build_summary, compute_report
from web.forms import read_form

ACK = "acknowledge this finding"
# The page and the JSON summary list the first 100 open findings and stale transfers, with
# whole counts (docs/rules.md Robustness rules: bounded answers); report files list everything.
LIST_LIMIT = 100


def _stale_after(request: Request) -> int:
    return int(getattr(settings_of(request), "stale_after", DEFAULT_STALE_AFTER))


def _period(values: Any) -> Period:
    try:
        return parse_period(
            values.get("since") or None, values.get("until") or None, names=("since", "until")
        )
    except PeriodError as exc:
        raise AdminError(str(exc), code="invalid_period") from None


async def summary_api(request: Request) -> Response:
    """`GET /api/reports/summary?since=&until=`: the same JSON as `report --format json`."""
    period = _period(request.query_params)

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session:
            return build_summary(
                session, period, stale_after=_stale_after(request), limit=LIST_LIMIT
            )

    return JSONResponse(await in_thread(load))


async def reports_page(request: Request) -> Response:
    """`GET /reports?since=&until=`: the HTML report with a period picker and ack forms.

    With `format=csv|xlsx|html|json` it is a 303 to the console's download of that file for the
    same period (`admin.report_files`, finance and admin); an unknown format is a 400."""
    period = _period(request.query_params)
    if "format" in request.query_params:
        chosen = report_files.format_of(request.query_params)
        return RedirectResponse(report_files.download_link(chosen, period), status_code=303)
    now = utcnow()
    # Acknowledge forms only for an operator who may acknowledge (a viewer reads the page).
    forms = PageForms(
        base_path=request.url.path,
        csrf_token=csrf_token(request),
        can_acknowledge=current_operator(request).role.allows(Role.FINANCE),
    )

    def render() -> str:
        with read_session(engine_of(request)) as session:
            report = compute_report(
                session, period, stale_after=_stale_after(request), now=now, limit=LIST_LIMIT
            )
        return render_html(report, now=now, forms=forms)

    page = await in_thread(render)
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
    """`POST /reports/findings/{id}/ack` with a `note`: acknowledge (as the API does, with the
    operator as the note's author); 303 back to the page."""
    # A refusal's page says what was refused and leads back to the report (admin.answers).
    setattr(request.state, REFUSED, (ACK, _back_to_page(request, Period())))
    finding_id = int(request.path_params["id"])
    if finding_id > MAX_ROW_ID:
        # Past any row id the database can hold (2^63 - 1): no such finding.
        raise NotFoundError(f"no finding with id {finding_id}")
    form = await read_form(request)
    note = actions.checked_note(form.get("note", ""))
    try:
        period = _period(form)
    except AdminError:
        period = Period()  # only decides where to go back to; never worth refusing the ack
    actor = actor_of(request)

    def write() -> None:
        with write_session(engine_of(request)) as session:
            actions.acknowledge(session, actor, [finding_id], note, now=utcnow())

    await in_thread(write)
    return RedirectResponse(_back_to_page(request, period), status_code=303)
