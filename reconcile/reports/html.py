"""The HTML report: one self-contained page (inline CSS and SVG, no script, no network)."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from html import escape
from importlib import resources

from reconcile.durations import describe_duration
from reconcile.reports.charts import bar_chart, hbar_chart
from reconcile.reports.model import STATUSES, OpenFinding, Report, StalePending
from reconcile.reports.naira import naira, naira_text

HTML_ROW_LIMIT = 500  # beyond this a page stops being readable; the CSV has every row
FINDING_COLUMNS = 7  # Id, Kind, Reference, Amount, Detail, What to do, Status


@dataclass(frozen=True)
class PageForms:
    """Set when the page is served: where the period form and the acknowledge forms post."""

    base_path: str  # the path the page is served at, e.g. "/reports"

    def ack_action(self, finding_id: int) -> str:
        """The POST target acknowledging one finding."""
        return f"{self.base_path.rstrip('/')}/findings/{finding_id}/ack"


@functools.cache
def stylesheet() -> str:
    """The inline stylesheet, read once from the package data."""
    return (resources.files("reconcile.reports") / "templates" / "report.css").read_text("utf-8")


def render_html(
    report: Report, *, now: dt.datetime | None = None, forms: PageForms | None = None
) -> str:
    """The whole page as one string; `forms` adds the period picker and acknowledge forms."""
    title = f"Finance report — {report.period.describe()}"
    stamp = f" · generated {now.strftime('%Y-%m-%d %H:%M UTC')}" if now else ""
    body = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="sub">Amounts in naira; days are Africa/Lagos calendar days{stamp}.</p>',
        _period_form(report) if forms else "",
        _cards(report),
        _status_table(report),
        "<h2>Daily volume and fees</h2>",
        _daily_charts(report),
        "<h2>Findings by kind</h2>",
        '<div class="kinds">'
        + hbar_chart(list(report.as_dict()["findings"].items()), title="Open findings by kind")
        + "</div>",
        _findings_table(report, forms),
        _stale_table(report),
        _days_table(report),
        "<footer>payrecon · money counted at the provider's confirmed figures when present, "
        "else the webhook's, else the expected amount and quoted fee.</footer>",
    ]
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # An empty icon: the browser must not go to the network (or 404) for a favicon.
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{stylesheet()}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def _period_form(report: Report) -> str:
    since = report.period.since.isoformat() if report.period.since else ""
    until = report.period.until.isoformat() if report.period.until else ""
    return (
        '<form class="period" method="get" action="">'
        f'<label>From (Lagos day)<input type="date" name="since" value="{since}"></label>'
        f'<label>To (inclusive)<input type="date" name="until" value="{until}"></label>'
        '<button type="submit">Show period</button></form>'
    )


def _card(label: str, value: str, note: str = "", *, alert: bool = False) -> str:
    return (
        f'<div class="card{" alert" if alert else ""}"><div class="label">{escape(label)}</div>'
        f'<div class="value">{escape(value)}</div><div class="note">{escape(note)}</div></div>'
    )


def _cards(report: Report) -> str:
    successful = report.status("successful")
    return (
        '<div class="cards">'
        + "".join(
            (
                _card(
                    "Wallet debit", naira(report.wallet_debit), "successful amount + fees charged"
                ),
                _card(
                    "Paid out (successful)",
                    naira(successful.amount),
                    f"{successful.count:,} transfers",
                ),
                _card("Fees charged", naira(report.fees_total), "successful and failed"),
                _card(
                    "Fees on failed transfers",
                    naira(report.fees_on_failed),
                    f"{report.status('failed').count:,} failed",
                    alert=report.fees_on_failed > 0,
                ),
                _card(
                    "Transfers", f"{report.total_count:,}", f"{report.unconfirmed:,} unconfirmed"
                ),
                _card(
                    "Open findings",
                    f"{report.open_findings_total:,}",
                    f"{sum(report.findings_acknowledged.values()):,} acknowledged",
                    alert=report.open_findings_total > 0,
                ),
                _card(
                    "Stale pending",
                    f"{len(report.stale_pending):,}",
                    f"pending over {describe_duration(report.stale_after)}",
                    alert=bool(report.stale_pending),
                ),
            )
        )
        + "</div>"
    )


def _status_table(report: Report) -> str:
    rows = "".join(
        f"<tr><td>{name}</td><td class=num>{report.status(name).count:,}</td>"
        f"<td class=num>{naira(report.status(name).amount)}</td>"
        f"<td class=num>{naira(report.status(name).fee)}{' quoted' if name == 'pending' else ''}"
        f"</td><td class=num>{report.status(name).unconfirmed:,}</td></tr>"
        for name in STATUSES
    )
    return "<h2>Transfers by status</h2>" + _table(
        "<th>Status</th><th class=num>Count</th><th class=num>Amount</th>"
        "<th class=num>Fees</th><th class=num>Unconfirmed</th>",
        rows,
    )


def _table(head: str, rows: str, *, css_class: str = "") -> str:
    # A wide table scrolls inside its own box: the page itself never gets wider than the
    # screen (readable on a 420 px phone), and nothing is cut off.
    attr = f' class="{css_class}"' if css_class else ""
    return (
        f'<div class="scroll"><table{attr}><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _figure(caption: str, svg: str) -> str:
    return f"<figure><figcaption>{escape(caption)}</figcaption>{svg}</figure>"


def _daily_charts(report: Report) -> str:
    labels = [day.date.isoformat() for day in report.days]
    volume = "Daily volume (amount of successful transfers)"
    fees = "Daily fees charged (successful and failed)"
    return (
        '<div class="charts">'
        + _figure(
            volume, bar_chart(labels, [d.amount for d in report.days], title=volume, fmt=naira)
        )
        + _figure(
            fees,
            bar_chart(
                labels, [d.fee for d in report.days], title=fees, fmt=naira, css_class="bar-fee"
            ),
        )
        + "</div>"
    )


def _ack_cell(finding: OpenFinding) -> str:
    if finding.acknowledged_at is not None:
        when = finding.acknowledged_at.strftime("%Y-%m-%d %H:%M")
        note = escape(finding.ack_note or "")
        return f'<span class="badge ok">acknowledged {when}</span><br>{note}'
    return '<span class="badge">open</span>'


def _ack_row(finding: OpenFinding, forms: PageForms | None, report: Report) -> str:
    # The form gets a row of its own under its finding, across the whole table: squeezed
    # into a column it left Detail and What to do a few words wide.
    if forms is None or finding.acknowledged_at is not None:
        return ""
    period = report.period.as_dict()
    hidden = "".join(
        f'<input type="hidden" name="{key}" value="{value}">'
        for key, value in period.items()
        if value
    )
    return (
        f'<tr class="ack-row"><td colspan="{FINDING_COLUMNS}">'
        f'<form class="ack" method="post" action="{escape(forms.ack_action(finding.id))}">'
        f'{hidden}<label for="note-{finding.id}">Note for finding {finding.id}</label>'
        f'<input type="text" id="note-{finding.id}" name="note" required '
        'placeholder="why it needs no further action (shown in reports)">'
        '<button type="submit">Acknowledge</button></form></td></tr>'
    )


def _row_class(finding: OpenFinding, forms: PageForms | None) -> str:
    if finding.acknowledged_at is not None:
        return "acked"
    return "with-form" if forms is not None else ""


def _findings_table(report: Report, forms: PageForms | None) -> str:
    shown = report.open_findings[:HTML_ROW_LIMIT]
    rows = "".join(
        f'<tr class="{_row_class(f, forms)}"><td class=num>{f.id}</td>'
        f"<td>{escape(f.kind)}</td><td>{escape(f.reference)}</td>"
        f"<td class=num>{naira(f.amount)}</td><td>{escape(naira_text(f.detail))}</td>"
        f'<td class="hint">{escape(f.what_to_do)}</td><td>{_ack_cell(f)}</td></tr>'
        f"{_ack_row(f, forms, report)}"
        for f in shown
    )
    more = len(report.open_findings) - len(shown)
    return (
        f"<h2>Open findings ({len(report.open_findings):,})</h2>"
        + (
            _table(
                "<th class=num>Id</th><th>Kind</th><th>Reference</th><th class=num>Amount</th>"
                "<th>Detail</th><th>What to do</th><th>Status</th>",
                rows,
                css_class="findings",
            )
            if shown
            else "<p>No open findings.</p>"
        )
        + (f'<p class="more">{more:,} more in the CSV export.</p>' if more > 0 else "")
    )


def _stale_row(item: StalePending) -> str:
    return (
        f"<tr><td>{escape(item.reference)}</td><td>{escape(item.provider_reference or '')}</td>"
        f"<td class=num>{naira(item.amount)}</td>"
        f"<td class=date>{item.created_at.strftime('%Y-%m-%d %H:%M')} UTC</td>"
        f"<td>{'acknowledged' if item.acknowledged else 'no'}</td>"
        f'<td class="hint">{escape(item.what_to_do)}</td></tr>'
    )


def _stale_table(report: Report) -> str:
    shown = report.stale_pending[:HTML_ROW_LIMIT]
    heading = (
        f"<h2>Stale pending ({len(report.stale_pending):,}, "
        f"pending over {describe_duration(report.stale_after)})</h2>"
    )
    if not shown:
        return heading + "<p>No stale pending transfers.</p>"
    return heading + _table(
        "<th>Reference</th><th>Provider reference</th><th class=num>Amount</th>"
        "<th>Pending since</th><th>Acknowledged</th><th>What to do</th>",
        "".join(map(_stale_row, shown)),
        css_class="stale",
    )


def _days_table(report: Report) -> str:
    rows = "".join(
        f"<tr><td class=date>{day.date.isoformat()}</td><td class=num>{day.count:,}</td>"
        f"<td class=num>{naira(day.amount)}</td><td class=num>{naira(day.fee)}</td>"
        f"<td class=num>{day.failed:,}</td></tr>"
        for day in report.days
    )
    return "<h2>Per day (Africa/Lagos)</h2>" + _table(
        "<th>Date</th><th class=num>Transfers</th><th class=num>Amount (successful)</th>"
        "<th class=num>Fees charged</th><th class=num>Failed</th>",
        rows,
    )
