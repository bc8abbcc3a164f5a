"""The spreadsheet export: Summary, Transfers and Collections sheets, written in write-only
mode."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._write_only import WriteOnlyWorksheet

from reconcile.reports.model import COLLECTION_STATUSES, STATUSES, Report
from reconcile.reports.naira import naira_number
from reconcile.reports.rows import TransferRow

# Money is stored as a naira number, shown with the naira sign and two decimals, so finance can
# sum and pivot it; negative figures (corrections) show in red.
NAIRA_FORMAT = '"\u20a6"#,##0.00;[Red]-"\u20a6"#,##0.00'
DATE_FORMAT = "yyyy-mm-dd"
TIME_FORMAT = "yyyy-mm-dd hh:mm:ss"

TRANSFER_HEADERS: tuple[tuple[str, int], ...] = (
    ("Reference", 28),
    ("Provider reference", 28),
    ("Origin", 11),
    ("Status", 11),
    ("Confirmed", 10),
    ("Created (UTC)", 20),
    ("Lagos date", 12),
    ("Amount (NGN)", 16),
    ("Fee (NGN)", 12),
    ("Expected amount (NGN)", 16),
    ("Quoted fee (NGN)", 12),
    ("Webhook amount (NGN)", 16),
    ("Webhook fee (NGN)", 12),
    ("Provider amount (NGN)", 16),
    ("Provider fee (NGN)", 12),
    ("Failure reason", 30),
    ("Findings", 40),
)


def write_xlsx(
    report: Report,
    rows: Iterable[TransferRow],
    path: Path,
    collections: Iterable[TransferRow] = (),
) -> int:
    """Write the workbook to `path`, streaming the transfers and then the collections (each on
    its own sheet, the same columns); the number of transfer rows."""
    workbook = Workbook(write_only=True)
    summary = workbook.create_sheet("Summary")
    _write_summary(summary, report)
    transfers = workbook.create_sheet("Transfers")
    count = _write_transfers(transfers, rows)
    _write_transfers(workbook.create_sheet("Collections"), collections)
    workbook.save(path)
    return count


def _cell(
    sheet: WriteOnlyWorksheet, value: Any, *, fmt: str | None = None, bold: bool = False
) -> Any:
    cell = WriteOnlyCell(sheet, value=value)
    if fmt is not None:
        cell.number_format = fmt
    if bold:
        cell.font = Font(bold=True)
    return cell


def _text(sheet: WriteOnlyWorksheet, value: str | None) -> Any:
    # Text from the ledger (references, reasons) can come from a webhook: typed as a string,
    # "=HYPERLINK(…)" stays text and is never a formula the spreadsheet would run.
    cell = WriteOnlyCell(sheet, value=value)
    if value is not None:
        cell.data_type = "s"
    return cell


def _money(sheet: WriteOnlyWorksheet, kobo: int | None) -> Any:
    return _cell(sheet, None if kobo is None else naira_number(kobo), fmt=NAIRA_FORMAT)


def _widths(sheet: WriteOnlyWorksheet, widths: Sequence[int]) -> None:
    # Column sizes must be set before the first row in write-only mode.
    for index, width in enumerate(widths, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width


def _header(sheet: WriteOnlyWorksheet, names: Sequence[str]) -> list[Any]:
    return [_cell(sheet, name, bold=True) for name in names]


def _write_summary(sheet: WriteOnlyWorksheet, report: Report) -> None:
    _widths(sheet, (30, 18, 18, 18, 14))
    sheet.freeze_panes = "A2"
    sheet.append([_cell(sheet, "payrecon finance report", bold=True)])
    sheet.append(["Period", report.period.describe()])
    sheet.append([])
    sheet.append(_header(sheet, ("Status", "Count", "Amount (NGN)", "Fee (NGN)", "Unconfirmed")))
    for name in STATUSES:
        totals = report.status(name)
        sheet.append(
            [
                name,
                totals.count,
                _money(sheet, totals.amount),
                _money(sheet, totals.fee),
                totals.unconfirmed,
            ]
        )
    sheet.append(["total", report.total_count, None, None, report.unconfirmed])
    sheet.append([])
    for label, kobo in (
        ("Fees charged (total)", report.fees_total),
        ("Fees on successful transfers", report.fees_on_successful),
        ("Fees charged on failed transfers", report.fees_on_failed),
        ("Fees on reversed transfers", report.fees_on_reversed),
        ("Fees quoted on pending transfers", report.status("pending").fee),
        ("Wallet debit", report.wallet_debit),
    ):
        sheet.append([_cell(sheet, label, bold=True), _money(sheet, kobo)])
    sheet.append([])
    _write_collection_summary(sheet, report)
    sheet.append([])
    sheet.append(_header(sheet, ("Finding kind", "Open", "Acknowledged")))
    for kind, count in report.as_dict()["findings"].items():
        sheet.append([kind, count, report.findings_acknowledged.get(kind, 0)])
    sheet.append([])
    sheet.append(
        _header(sheet, ("Lagos date", "Transfers", "Amount (NGN)", "Fees (NGN)", "Failed"))
    )
    for day in report.days:
        sheet.append(
            [
                _cell(sheet, day.date, fmt=DATE_FORMAT),
                day.count,
                _money(sheet, day.amount),
                _money(sheet, day.fee),
                day.failed,
            ]
        )


def _write_collection_summary(sheet: WriteOnlyWorksheet, report: Report) -> None:
    collections = report.collections
    sheet.append(_header(sheet, ("Collections", "Count", "Amount (NGN)", "Fee (NGN)")))
    for name in COLLECTION_STATUSES:
        totals = collections.status(name)
        sheet.append([name, totals.count, _money(sheet, totals.amount), _money(sheet, totals.fee)])
    sheet.append(["total", collections.total, None, None])
    sheet.append([])
    for label, kobo in (
        ("Collections received", collections.received),
        ("Collection fees", collections.fees),
        ("Net flow", report.net_flow),
    ):
        sheet.append([_cell(sheet, label, bold=True), _money(sheet, kobo)])


def _write_transfers(sheet: WriteOnlyWorksheet, rows: Iterable[TransferRow]) -> int:
    _widths(sheet, [width for _, width in TRANSFER_HEADERS])
    sheet.freeze_panes = "A2"
    sheet.append(_header(sheet, [name for name, _ in TRANSFER_HEADERS]))
    count = 0
    for row in rows:
        sheet.append(
            [
                _text(sheet, row.reference),
                _text(sheet, row.provider_reference),
                row.origin,
                row.status,
                "yes" if row.confirmed else "no",
                # Excel has no time zones: write naive UTC and say so in the header.
                _cell(sheet, _naive_utc(row.created_at), fmt=TIME_FORMAT),
                _cell(sheet, row.lagos_date, fmt=DATE_FORMAT),
                _money(sheet, row.amount),
                _money(sheet, row.fee),
                _money(sheet, row.expected_amount),
                _money(sheet, row.quoted_fee),
                _money(sheet, row.webhook_amount),
                _money(sheet, row.webhook_fee),
                _money(sheet, row.provider_amount),
                _money(sheet, row.provider_fee),
                _text(sheet, row.failure_reason),
                _text(sheet, row.findings),
            ]
        )
        count += 1
    return count


def _naive_utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.UTC).replace(tzinfo=None)
