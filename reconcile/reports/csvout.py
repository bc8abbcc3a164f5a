"""The CSV export: one row per transfer and per collection (`type` says which) with its
findings, written while the rows stream in."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import TextIO

from reconcile.reports.model import iso
from reconcile.reports.rows import COLUMNS, TransferRow


def write_csv(rows: Iterable[TransferRow], out: TextIO) -> int:
    """Write the header and every row as it comes (nothing is held back); the row count."""
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    count = 0
    for row in rows:
        writer.writerow(
            (
                row.type,
                inert(row.reference),
                inert(row.provider_reference or ""),
                row.origin,
                row.status,
                "yes" if row.confirmed else "no",
                iso(row.created_at),
                row.lagos_date.isoformat(),
                row.amount,
                row.fee,
                _blank(row.expected_amount),
                _blank(row.quoted_fee),
                _blank(row.webhook_amount),
                _blank(row.webhook_fee),
                _blank(row.provider_amount),
                _blank(row.provider_fee),
                inert(row.failure_reason or ""),
                inert(row.findings),
            )
        )
        count += 1
    return count


# What makes a spreadsheet read a cell as a formula (OWASP, "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def inert(text: str) -> str:
    """`text` as a spreadsheet shows it and never runs it: one that begins like a formula gets
    a leading apostrophe, which Excel, LibreOffice and Google Sheets read as "this is text"."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def _blank(value: int | None) -> int | str:
    return "" if value is None else value
