"""XLSX statements through a mapping, read from workbooks the tests build in memory."""

from __future__ import annotations

import datetime as dt
import io

import pytest

from statements.errors import StatementFormatError
from statements.lines import Direction, InvalidLine, ParsedLine
from statements.mapping import load_mapping
from statements.xlsxformat import read_xlsx
from tests.unit.statements.rows import SANDBOX_HEADER, xlsx_bytes


def test_sandbox_text_cells_become_lines_with_their_row_numbers() -> None:
    """The sandbox's sheet `Statement` of text cells reads like its CSV."""
    workbook = xlsx_bytes(
        [
            SANDBOX_HEADER,
            [
                "2026-11-26",
                "2026-11-26",
                "TRF_A",
                "Transfer / inv-1",
                "12,500.00",
                "",
                "987,500.00",
            ],
            ["2026-11-26", "2026-11-26", "TRF_A", "Fee: TRF_A", "10.75", "", "987,489.25"],
        ]
    )
    debit, fee = read_xlsx(workbook, load_mapping("sandbox"))
    assert debit == ParsedLine(
        2,
        dt.date(2026, 11, 26),
        dt.date(2026, 11, 26),
        1250000,
        Direction.DEBIT,
        98750000,
        "TRF_A",
        "Transfer / inv-1",
    )
    assert isinstance(fee, ParsedLine) and (fee.number, fee.amount) == (3, 1075)


def test_number_and_date_cells_and_blank_rows() -> None:
    """Date cells, float and int amounts, a numeric reference; a blank row is skipped but
    counted, so the next line keeps its spreadsheet row number."""
    workbook = xlsx_bytes(
        [
            SANDBOX_HEADER,
            [dt.datetime(2026, 11, 26), None, 12345, "N", 0.1, None, 1250.5],
            [None] * 7,
            [dt.date(2026, 11, 27), None, "R", "N", None, 3, 1253.5],
        ]
    )
    first, second = read_xlsx(workbook, load_mapping("sandbox"))
    assert isinstance(first, ParsedLine) and isinstance(second, ParsedLine)
    assert (first.date, first.amount, first.balance, first.reference) == (
        dt.date(2026, 11, 26),
        10,
        125050,
        "12345",
    )
    assert (second.number, second.amount, second.direction) == (4, 300, Direction.CREDIT)


def test_an_unreadable_cell_is_an_invalid_line_with_its_row() -> None:
    """Three decimals in a number cell, a date as an amount: invalid, with the row number."""
    workbook = xlsx_bytes(
        [
            SANDBOX_HEADER,
            ["2026-11-26", None, "R", "N", 12.345, None, None],
            ["2026-11-26", None, "R", "N", dt.datetime(2026, 1, 1), None, None],
        ]
    )
    first, second = read_xlsx(workbook, load_mapping("sandbox"))
    assert first == InvalidLine(2, "debit 12.345 has more than two decimals")
    assert second == InvalidLine(3, "debit holds a date, not an amount")


def test_a_missing_sheet_or_not_a_workbook_is_refused() -> None:
    """The mapping's sheet absent, or bytes that are no zip: a StatementFormatError."""
    with pytest.raises(StatementFormatError, match="no sheet 'Statement'; it has 'Sheet1'"):
        list(read_xlsx(xlsx_bytes([SANDBOX_HEADER], title="Sheet1"), load_mapping("sandbox")))
    with pytest.raises(StatementFormatError, match="not an XLSX workbook"):
        list(read_xlsx(io.BytesIO(b"Date,Reference\r\n"), load_mapping("sandbox")))
