"""Statement files the tests build: CSV text and XLSX workbooks in memory."""

from __future__ import annotations

import io

import openpyxl

SANDBOX_HEADER: list[object] = [
    "Date",
    "Value Date",
    "Reference",
    "Narration",
    "Debit",
    "Credit",
    "Balance",
]


def csv_bytes(*lines: str) -> io.BytesIO:
    """A CSV file of these physical lines (CRLF ends, as the csv module writes)."""
    return io.BytesIO("".join(line + "\r\n" for line in lines).encode())


def xlsx_bytes(rows: list[list[object]], *, title: str = "Statement") -> io.BytesIO:
    """A one-sheet workbook holding `rows` from A1 (None leaves a cell empty)."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = title
    for row in rows:
        sheet.append(row)
    data = io.BytesIO()
    workbook.save(data)
    data.seek(0)
    return data
