"""The text report: rich tables for a terminal (or a plain file), naira with separators."""

from __future__ import annotations

import datetime as dt

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from reconcile.durations import describe_duration
from reconcile.reports.model import COLLECTION_STATUSES, STATUSES, Report
from reconcile.reports.naira import naira, naira_text

TEXT_ROW_LIMIT = 50  # longer lists belong in the CSV or the spreadsheet, not a terminal


def _money_table(title: str) -> Table:
    return Table(title=title, title_justify="left", caption_justify="left", box=box.SIMPLE_HEAVY)


def render_text(report: Report, console: Console, *, now: dt.datetime | None = None) -> None:
    """Print the whole report to `console`."""
    stamp = f" · generated {now.strftime('%Y-%m-%d %H:%M UTC')}" if now else ""
    console.print(f"[bold]payrecon finance report[/bold] — {report.period.describe()}{stamp}")
    console.print()
    console.print(_status_table(report))
    console.print(_fees_table(report))
    console.print(_collections_table(report))
    console.print(_findings_by_kind(report))
    if report.open_findings:
        console.print(_open_findings(report))
    console.print(_stale_pending(report))
    console.print(_days(report))


def _status_table(report: Report) -> Table:
    table = _money_table("Transfers by status")
    table.add_column("Status")
    table.add_column("Count", justify="right")
    table.add_column("Amount", justify="right")
    table.add_column("Fees", justify="right")
    table.add_column("Unconfirmed", justify="right")
    for name in STATUSES:
        totals = report.status(name)
        fee_label = naira(totals.fee) + (" (quoted)" if name == "pending" else "")
        table.add_row(
            name, f"{totals.count:,}", naira(totals.amount), fee_label, f"{totals.unconfirmed:,}"
        )
    table.add_section()
    total, unconfirmed = f"{report.total_count:,}", f"{report.unconfirmed:,}"
    table.add_row("[bold]total[/bold]", total, "", "", unconfirmed)
    return table


def _fees_table(report: Report) -> Table:
    table = _money_table("Fees and wallet")
    table.add_column("Figure")
    table.add_column("Naira", justify="right")
    table.add_row("Fees charged (successful + failed + reversed)", naira(report.fees_total))
    table.add_row("Fees on successful transfers", naira(report.fees_on_successful))
    table.add_row("Fees charged on failed transfers", naira(report.fees_on_failed))
    table.add_row("Fees on reversed transfers", naira(report.fees_on_reversed))
    table.add_row("Fees quoted on pending transfers", naira(report.status("pending").fee))
    table.add_section()
    table.add_row("[bold]Wallet debit[/bold]", f"[bold]{naira(report.wallet_debit)}[/bold]")
    sources = report.figures_from
    table.caption = (
        f"Figures from the provider's record for {sources.get('provider', 0):,} transfers, "
        f"the webhook for {sources.get('webhook', 0):,}, "
        f"the expected amount and quote for {sources.get('expected', 0):,}."
    )
    return table


def _collections_table(report: Report) -> Table:
    table = _money_table("Collections (money coming in)")
    table.add_column("Status")
    table.add_column("Count", justify="right")
    table.add_column("Amount", justify="right")
    table.add_column("Fees", justify="right")
    collections = report.collections
    for name in COLLECTION_STATUSES:
        totals = collections.status(name)
        fee_label = naira(totals.fee) + (" (quoted)" if name == "pending" else "")
        table.add_row(name, f"{totals.count:,}", naira(totals.amount), fee_label)
    table.add_section()
    table.add_row("[bold]total[/bold]", f"{collections.total:,}", "", "")
    table.add_row("Received", "", naira(collections.received), "")
    table.add_row("Collection fees", "", "", naira(collections.fees))
    table.add_row("[bold]Net flow[/bold]", "", f"[bold]{naira(report.net_flow)}[/bold]", "")
    table.caption = "Net flow = collections received − collection fees − wallet debit."
    return table


def _findings_by_kind(report: Report) -> Table:
    table = _money_table("Open findings by kind")
    table.add_column("Kind")
    table.add_column("Open", justify="right")
    table.add_column("Acknowledged", justify="right")
    for kind, count in report.as_dict()["findings"].items():
        table.add_row(kind, f"{count:,}", f"{report.findings_acknowledged.get(kind, 0):,}")
    return table


def _open_findings(report: Report) -> Table:
    shown = report.open_findings[:TEXT_ROW_LIMIT]
    table = _money_table(f"Open findings ({len(report.open_findings):,})")
    table.add_column("Id", justify="right")
    table.add_column("Kind")
    table.add_column("Reference")
    table.add_column("Detail")
    table.add_column("What to do")
    for finding in shown:
        # Details and notes come from webhooks and people: escape them so `[` is not markup.
        ack = f"\n[dim]acknowledged: {escape(finding.ack_note or '')}[/dim]"
        table.add_row(
            str(finding.id),
            finding.kind,
            escape(finding.reference),
            escape(naira_text(finding.detail)) + (ack if finding.acknowledged_at else ""),
            finding.what_to_do,
        )
    if len(report.open_findings) > len(shown):
        table.caption = f"{len(report.open_findings) - len(shown):,} more: see `--format csv`."
    return table


def _stale_pending(report: Report) -> Table:
    table = _money_table(
        f"Stale pending (pending over {describe_duration(report.stale_after)}): "
        f"{len(report.stale_pending):,}"
    )
    table.add_column("Reference")
    table.add_column("Amount", justify="right")
    table.add_column("Since (UTC)")
    table.add_column("Acknowledged")
    for item in report.stale_pending[:TEXT_ROW_LIMIT]:
        table.add_row(
            escape(item.reference),
            naira(item.amount),
            item.created_at.strftime("%Y-%m-%d %H:%M"),
            "yes" if item.acknowledged else "no",
        )
    if report.stale_pending:
        table.caption = report.stale_pending[0].what_to_do
    return table


def _days(report: Report) -> Table:
    table = _money_table("Per day (Africa/Lagos)")
    table.add_column("Date")
    table.add_column("Transfers", justify="right")
    table.add_column("Amount (successful)", justify="right")
    table.add_column("Fees charged", justify="right")
    table.add_column("Failed", justify="right")
    for day in report.days:
        table.add_row(
            day.date.isoformat(),
            f"{day.count:,}",
            naira(day.amount),
            naira(day.fee),
            f"{day.failed:,}",
        )
    return table
