"""`/console/reports`: a period's figures in the console, with its report files to download."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from admin.console.render import render
from admin.identity import Role, current_operator
from admin.report_files import FILE_FORMATS, download_link, period_of
from admin.shell import engine_of, in_thread, settings_of
from ledger.db import read_session
from ledger.types import utcnow
from reconcile.checks import DEFAULT_STALE_AFTER
from reconcile.reports.html import summary_cards
from reconcile.reports.model import COLLECTION_STATUSES, STATUSES
from reconcile.reports.period import Period, lagos_day
from reconcile.reports.summary import compute_report

# The page shows figures and counts only: its lists live in the findings queue and the files.
NO_LISTS = 0


def default_period(today: dt.date) -> Period:
    """This month so far, in Lagos days."""
    return Period(since=today.replace(day=1), until=today)


def quick_periods(today: dt.date) -> list[tuple[str, Period]]:
    """The periods offered as one-click links: today, this month, last month."""
    last_of_previous = today.replace(day=1) - dt.timedelta(days=1)
    return [
        ("Today", Period(since=today, until=today)),
        ("This month", default_period(today)),
        ("Last month", Period(since=last_of_previous.replace(day=1), until=last_of_previous)),
    ]


def _query(period: Period) -> str:
    return urlencode({k: v for k, v in period.as_dict().items() if v})


async def reports_console_page(request: Request) -> Response:
    """`GET /console/reports?since=&until=`: the summary of a period (this month by default);
    finance and admin also get its CSV, XLSX, HTML and JSON files."""
    now = utcnow()
    today = lagos_day(now)
    given = request.query_params
    period = period_of(given) if given.get("since") or given.get("until") else None
    period = period or default_period(today)
    stale_after = int(getattr(settings_of(request), "stale_after", DEFAULT_STALE_AFTER))

    def load() -> Any:
        with read_session(engine_of(request)) as session:
            return compute_report(session, period, stale_after=stale_after, now=now, limit=NO_LISTS)

    report = await in_thread(load)
    may_download = current_operator(request).role.allows(Role.FINANCE)
    return render(
        request,
        "reports.html",
        title="Reports",
        report=report,
        period=period.as_dict(),
        described=period.describe(),
        cards=summary_cards(report),
        statuses=STATUSES,
        collection_statuses=COLLECTION_STATUSES,
        kinds=[(k, n) for k, n in report.as_dict()["findings"].items() if n],
        quick=[(label, _query(p)) for label, p in quick_periods(today)],
        downloads=[(f.name.upper(), download_link(f, period)) for f in FILE_FORMATS]
        if may_download
        else [],
        full_report="/reports" + (f"?{q}" if (q := _query(period)) else ""),
    )
