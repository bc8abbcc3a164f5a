"""The HTML report: one self-contained page (inline CSS and SVG, no script, no network)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup

from reconcile.durations import describe_duration
from reconcile.reports.charts import bar_chart, hbar_chart
from reconcile.reports.model import COLLECTION_STATUSES, STATUSES, Report
from reconcile.reports.naira import naira, naira_text
from reconcile.reports.period import lagos_text
from web.templates import with_filters

HTML_ROW_LIMIT = 500  # beyond this a page stops being readable; the CSV has every row
FINDING_COLUMNS = 7  # Id, Kind, Reference, Amount, Detail, What to do, Status


@dataclass(frozen=True)
class PageForms:
    """Set when the page is served: where the period form and the acknowledge forms post."""

    base_path: str  # the path the page is served at, e.g. "/reports"
    # The operator's CSRF token, sent back by each acknowledge form (admin.identity checks it).
    csrf_token: str | None = None
    # Whether the reader may acknowledge findings (finance or admin): no forms otherwise.
    can_acknowledge: bool = True

    def ack_action(self, finding_id: int) -> str:
        """The POST target acknowledging one finding."""
        return f"{self.base_path.rstrip('/')}/findings/{finding_id}/ack"


@dataclass(frozen=True)
class Card:
    """One headline figure at the top of the page."""

    label: str
    value: str
    note: str = ""
    alert: bool = False


def environment() -> jinja2.Environment:
    """The shared environment (web.templates) with the report's filters; its templates are
    reconcile/reports/templates, under `report/`."""
    return with_filters(
        naira=naira, naira_text=naira_text, duration=describe_duration, lagos=lagos_text
    )


def render_html(
    report: Report, *, now: dt.datetime | None = None, forms: PageForms | None = None
) -> str:
    """The whole page as one string; `forms` adds the period picker and acknowledge forms."""
    findings = report.open_findings[:HTML_ROW_LIMIT]
    kinds = list(report.as_dict()["findings"].items())
    template = environment().get_template("report/report.html")
    return template.render(
        report=report,
        title=f"Finance report — {report.period.describe()}",
        generated=now,
        forms=forms,
        period=report.period.as_dict(),
        period_query=urlencode({k: v for k, v in report.period.as_dict().items() if v}),
        cards=summary_cards(report),
        statuses=STATUSES,
        collection_statuses=COLLECTION_STATUSES,
        daily_charts=_daily_charts(report),
        kinds_chart=_svg(hbar_chart(kinds, title="Open findings by kind")),
        findings=findings,
        more=report.open_findings_total - len(findings),
        finding_columns=FINDING_COLUMNS,
        stale=report.stale_pending[:HTML_ROW_LIMIT],
        more_stale=report.stale_pending_total - min(len(report.stale_pending), HTML_ROW_LIMIT),
    )


def summary_cards(report: Report) -> list[Card]:
    """The headline figures, as the HTML report and the console's Reports page show them."""
    successful = report.status("successful")
    return [
        Card("Wallet debit", naira(report.wallet_debit), "successful amount + fees charged"),
        Card("Paid out (successful)", naira(successful.amount), f"{successful.count:,} transfers"),
        Card(
            "Collected (received)",
            naira(report.collections.received),
            f"{report.collections.status('successful').count:,} collections, "
            f"fees {naira(report.collections.fees)}",
        ),
        Card(
            "Net flow",
            naira(report.net_flow),
            "received − collection fees − wallet debit",
        ),
        Card("Fees charged", naira(report.fees_total), "successful, failed and reversed"),
        Card(
            "Fees on failed transfers",
            naira(report.fees_on_failed),
            f"{report.status('failed').count:,} failed",
            alert=report.fees_on_failed > 0,
        ),
        Card("Transfers", f"{report.total_count:,}", f"{report.unconfirmed:,} unconfirmed"),
        Card(
            "Open findings",
            f"{report.open_findings_total:,}",
            f"{sum(report.findings_acknowledged.values()):,} acknowledged",
            alert=report.open_findings_total > 0,
        ),
        Card(
            "Stale pending",
            f"{report.stale_pending_total:,}",
            f"pending over {describe_duration(report.stale_after)}",
            alert=report.stale_pending_total > 0,
        ),
    ]


def _daily_charts(report: Report) -> list[tuple[str, Markup]]:
    labels = [day.date.isoformat() for day in report.days]
    volume = "Daily volume (amount of successful transfers)"
    fees = "Daily fees charged (successful and failed)"
    amounts = [day.amount for day in report.days]
    charged = [day.fee for day in report.days]
    return [
        (volume, _svg(bar_chart(labels, amounts, title=volume, fmt=naira))),
        (fees, _svg(bar_chart(labels, charged, title=fees, fmt=naira, css_class="bar-fee"))),
    ]


def _svg(chart: str) -> Markup:
    # charts.py escapes every text it writes into a chart, so its markup goes in as it is.
    return Markup(chart)  # noqa: S704
