"""CSV statements through a mapping: lines with their physical line numbers, every invalid
line with its reason, preambles and footers skipped, missing columns refused."""

from __future__ import annotations

import datetime as dt
import io

import pytest

from statements.csvformat import MAX_LINE_BYTES, read_csv
from statements.errors import StatementFormatError
from statements.lines import Direction, InvalidLine, ParsedLine
from statements.mapping import load_mapping, parse_mapping
from tests.unit.statements.rows import csv_bytes

HEADER = "Date,Value Date,Reference,Narration,Debit,Credit,Balance"


def test_sandbox_rows_become_lines_with_their_line_numbers() -> None:
    """Each row is one line: dates, the side it is on, naira in kobo, the running balance."""
    stream = csv_bytes(
        HEADER,
        '2026-11-26,2026-11-26,TRF_A,Transfer to 0123 / inv-1,"12,500.00",,"987,500.00"',
        '2026-11-26,2026-11-26,TRF_A,Fee: TRF_A,10.75,,"987,489.25"',
        '2026-11-27,2026-11-27,COL_B,Collection: COL_B / o-1,,"1,000.00","988,489.25"',
    )
    lines = list(read_csv(stream, load_mapping("sandbox")))
    assert lines == [
        ParsedLine(
            2,
            dt.date(2026, 11, 26),
            dt.date(2026, 11, 26),
            1250000,
            Direction.DEBIT,
            98750000,
            "TRF_A",
            "Transfer to 0123 / inv-1",
        ),
        ParsedLine(
            3,
            dt.date(2026, 11, 26),
            dt.date(2026, 11, 26),
            1075,
            Direction.DEBIT,
            98748925,
            "TRF_A",
            "Fee: TRF_A",
        ),
        ParsedLine(
            4,
            dt.date(2026, 11, 27),
            dt.date(2026, 11, 27),
            100000,
            Direction.CREDIT,
            98848925,
            "COL_B",
            "Collection: COL_B / o-1",
        ),
    ]
    assert not stream.closed


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ('2026-11-26,2026-11-26,R,N,12.345,,"1.00"', 'debit "12.345" has more than two decimals'),
        ("2026-11-26,2026-11-26,R,N,,abc,1.00", 'credit "abc" is not an amount in naira'),
        ("2026-11-26,2026-11-26,R,N,5.00,5.00,1.00", "both a debit and a credit"),
        ("2026-11-26,2026-11-26,R,N,,,1.00", "neither a debit nor a credit"),
        ("2026-11-26,2026-11-26,R,N,0.00,0.00,1.00", "neither a debit nor a credit"),
        ("2026-11-26,2026-11-26,R,N,-5.00,,1.00", 'debit "-5.00" is negative'),
        (
            "26/11/2026,2026-11-26,R,N,5.00,,1.00",
            'date "26/11/2026" is not a date written as %Y-%m-%d',
        ),
        ("2026-02-30,2026-11-26,R,N,5.00,,1.00", 'date "2026-02-30" is not a date'),
        (",2026-11-26,R,N,5.00,,1.00", "date is empty"),
        ("2026-11-26,tomorrow,R,N,5.00,,1.00", 'value date "tomorrow" is not a date'),
        ("2026-11-26,2026-11-26,R,N,5.00,,1.0.0", 'balance "1.0.0" is not an amount'),
    ],
)
def test_an_unreadable_row_is_an_invalid_line_with_its_number(row: str, reason: str) -> None:
    """A bad date, amount or balance, both sides or neither: the line number and why."""
    lines = list(
        read_csv(
            csv_bytes(HEADER, "2026-11-26,2026-11-26,R,N,1.00,,0.00", row), load_mapping("sandbox")
        )
    )
    assert isinstance(lines[0], ParsedLine)
    invalid = lines[1]
    assert isinstance(invalid, InvalidLine) and invalid.number == 3
    assert reason in invalid.reason


def test_preamble_skip_rows_footer_and_blank_rows_are_not_lines() -> None:
    """skip_rows rows come before the header; a skip_rows_with row and blank rows are passed
    over; the stop_at row ends the table, whatever follows; numbers count every line."""
    stream = csv_bytes(
        "Account Name,ADEBAYO TRADING LTD",
        "Account Number,0123456789",
        "Currency,NGN",
        'Branch,"Marina, Lagos"',
        "Period,01/11/2026 to 30/11/2026",
        "Print Date,01/12/2026",
        "",
        "Trans. Date,Value Date,Reference,Narration,Debit,Credit,Balance",
        ',,,Opening Balance,,,"1,000.00"',
        '02/11/2026,02/11/2026,FT1,"NIP TRF, TO WALLET",100.00,,900.00',
        "",
        "05/11/2026,05/11/2026,FT2,LODGEMENT,,50.00,950.00",
        "Closing Balance,,,,,,950.00",
        "anything,after,the,footer",
    )
    lines = list(read_csv(stream, load_mapping("ng-debit-credit")))
    assert [(line.number, line.reference) for line in lines if isinstance(line, ParsedLine)] == [
        (10, "FT1"),
        (12, "FT2"),
    ]
    assert len(lines) == 2
    assert isinstance(lines[0], ParsedLine) and lines[0].narration == "NIP TRF, TO WALLET"


def test_dd_mon_yyyy_dates_and_the_total_footer() -> None:
    """The second bank shape: 26-Nov-2026 dates, Withdrawals/Lodgements, a Total row."""
    stream = csv_bytes(
        "STATEMENT OF ACCOUNT",
        "Customer Name: X",
        "Account No: 1",
        "Date Range: x",
        "Tran Date,Value Date,Tran ID,Description,Withdrawals,Lodgements,Balance",
        '01-Nov-2026,01-Nov-2026,,Balance B/F,,,"2,000.00"',
        '26-NOV-2026,26-Nov-2026,S1,LEVY,50.00,,"1,950.00"',
        "Total,,,,50.00,0.00,",
    )
    (line,) = read_csv(stream, load_mapping("ng-withdrawals-lodgements"))
    assert isinstance(line, ParsedLine)
    assert (line.number, line.date, line.amount, line.direction) == (
        7,
        dt.date(2026, 11, 26),
        5000,
        Direction.DEBIT,
    )


def test_a_quoted_line_break_keeps_the_next_rows_physical_line_number() -> None:
    """A narration spanning two physical lines: the next row is numbered by its own line."""
    stream = csv_bytes(HEADER, '2026-11-26,,R1,"two\r\nlines",1.00,,', "2026-11-26,,R2,N,,1.00,")
    first, second = read_csv(stream, load_mapping("sandbox"))
    assert isinstance(first, ParsedLine) and first.narration == "two\r\nlines"
    assert (first.number, second.number) == (2, 4)
    assert isinstance(second, ParsedLine) and first.balance is None and first.value_date is None


def test_a_signed_kobo_column() -> None:
    """With one signed amount column in kobo, negative is a debit; zero is invalid."""
    mapping = parse_mapping(
        b'date_format = "%Y-%m-%d"\namounts = "kobo"\ndelimiter = ";"\n'
        b'[columns]\ndate = "D"\nnarration = "N"\namount = "A"\n',
        name="signed",
    )
    debit, credit, zero = read_csv(
        csv_bytes("D;N;A", "2026-11-26;out;-1250", "2026-11-26;in;99", "2026-11-26;none;0"), mapping
    )
    assert isinstance(debit, ParsedLine) and isinstance(credit, ParsedLine)
    assert (debit.amount, debit.direction, debit.reference) == (1250, Direction.DEBIT, "")
    assert (credit.amount, credit.direction) == (99, Direction.CREDIT)
    assert zero == InvalidLine(4, "amount is zero")


def test_a_header_without_the_mappings_columns_is_refused_naming_them() -> None:
    """The missing header texts are named, and what the row has."""
    stream = csv_bytes("Date,Reference,Narration,Amount,Balance", "2026-11-26,R,N,1.00,1.00")
    with pytest.raises(
        StatementFormatError, match=r'line 1\) has no column "Value Date", "Debit", "Credit"'
    ):
        list(read_csv(stream, load_mapping("sandbox")))


def test_a_file_shorter_than_its_preamble_or_not_text_is_refused() -> None:
    """No header row at all, bytes that are not UTF-8, a NUL byte: a StatementFormatError."""
    with pytest.raises(StatementFormatError, match="ends before its header row"):
        list(read_csv(csv_bytes("Account Name,X"), load_mapping("ng-debit-credit")))
    with pytest.raises(StatementFormatError, match="line 2 is not utf-8-sig text"):
        list(read_csv(io.BytesIO(HEADER.encode() + b"\r\n\xff\xfe,x\r\n"), load_mapping("sandbox")))
    with pytest.raises(StatementFormatError, match="line 2 is not CSV"):
        list(read_csv(csv_bytes(HEADER, '2026-11-26,"a"b,R'), load_mapping("sandbox")))
    with pytest.raises(StatementFormatError, match="line 2 is longer than"):
        list(read_csv(csv_bytes(HEADER, "x" * (MAX_LINE_BYTES + 1)), load_mapping("sandbox")))
