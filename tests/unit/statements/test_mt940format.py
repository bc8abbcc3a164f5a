"""MT940 statements: :61: lines with :86: narrations, running balances from :60F:, stated
balances, and malformed lines as invalid lines with their numbers."""

from __future__ import annotations

import datetime as dt
import io

import pytest

from statements.errors import StatementFormatError
from statements.lines import Direction, InvalidLine, ParsedLine, StatedBalances
from statements.mt940format import Mt940Statement


def mt940(*fields: str) -> io.BytesIO:
    """An MT940 file of these lines with CRLF ends, as the sandbox writes it."""
    return io.BytesIO("".join(field + "\r\n" for field in fields).encode())


OPENING = (":20:STMT-1", ":25:SANDBOX-WALLET", ":28C:1/1", ":60F:C261126NGN1000000,00")


def test_lines_balances_references_and_narrations() -> None:
    """Each :61: is a line numbered by its own line, running balances follow from :60F:, the
    untruncated bank reference wins, a wrapped :86: is glued back together."""
    statement = Mt940Statement(
        mt940(
            *OPENING,
            ":61:2611261126D12500,00NTRFTRF_D7731322DE47//TRF_D7731322DE471BE7",
            ":86:Transfer to 0123456789 Sample Bank / inv-1",
            ":61:2611271127C5000,NTRFFND_0123//FND_0123456789ABCDEF",
            ":86:Funding from bank account 01234567",
            "89",
            ":62F:C261127NGN992500,00",
        )
    )
    lines = list(statement.lines())
    assert lines == [
        ParsedLine(
            5,
            dt.date(2026, 11, 26),
            dt.date(2026, 11, 26),
            1250000,
            Direction.DEBIT,
            98750000,
            "TRF_D7731322DE471BE7",
            "Transfer to 0123456789 Sample Bank / inv-1",
        ),
        ParsedLine(
            7,
            dt.date(2026, 11, 27),
            dt.date(2026, 11, 27),
            500000,
            Direction.CREDIT,
            99250000,
            "FND_0123456789ABCDEF",
            "Funding from bank account 0123456789",
        ),
    ]
    assert type(lines[0].date) is dt.date  # type: ignore[union-attr]
    assert statement.stated == StatedBalances(opening=100000000, closing=99250000)


def test_swift_blocks_debit_opening_and_reversal_marks() -> None:
    """A {1:}{2:}{4: wrapped message with a debit opening balance; RC is a debit, RD a credit;
    a customer reference without bank reference stays."""
    statement = Mt940Statement(
        mt940(
            "{1:F01SANDBOXXXXXX0000000000}{2:I940SANDBOXXXXXXN}{4:",
            ":20:STMT-1",
            ":60F:D261126NGN100,00",
            ":61:261126RC1,00NTRFREF-ONE",
            ":61:261126RD2,50NTRFREF-TWO",
            ":62F:D261126NGN98,50",
            "-}",
        )
    )
    first, second = statement.lines()
    assert isinstance(first, ParsedLine) and isinstance(second, ParsedLine)
    assert (first.direction, first.balance, first.reference) == (Direction.DEBIT, -10100, "REF-ONE")
    assert (second.direction, second.balance, second.narration) == (Direction.CREDIT, -9850, "")
    assert statement.stated == StatedBalances(opening=-10000, closing=-9850)


@pytest.mark.parametrize(
    ("field", "reason"),
    [
        (":61:garbage", '":61: "garbage" is not a statement line'[1:]),
        (":61:2611261126D12500,001NTRFX", ':61: amount "12500,001" has more than two decimals'),
        (":61:2611261126D12500NTRFX", ':61: amount "12500" is not an MT940 amount'),
        (":61:2611262611D1,00NTRFX", "has an invalid date"),
        (":61:2613261126D1,00NTRFX", "has an invalid date"),
    ],
)
def test_a_malformed_61_is_an_invalid_line_with_its_number(field: str, reason: str) -> None:
    """An unreadable :61: is an invalid line numbered by its line; the lines around it stay."""
    lines = list(
        Mt940Statement(
            mt940(*OPENING, ":61:2611261126D1,00NTRFA", field, ":86:x", ":61:2611261126D1,00NTRFB")
        ).lines()
    )
    assert [type(line) for line in lines] == [ParsedLine, InvalidLine, ParsedLine]
    assert lines[1].number == 6
    assert isinstance(lines[1], InvalidLine) and reason in lines[1].reason
    # The invalid line moves no money: the next balance follows the first line's.
    assert isinstance(lines[2], ParsedLine) and lines[2].balance == 100000000 - 200


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ((":20:X", ":61:2611261126D1,00NTRFA"), "before any opening balance"),
        ((":20:X", ":60F:C261126NGN1,001"), "the balance :60F: cannot be read"),
        ((":20:X", ":60F:nonsense"), "the balance :60F: cannot be read"),
        (("Date,Reference", "x,y"), "line 1 is not an MT940 field"),
        ((), "not an MT940 statement"),
        ((":20:X", ":86:" + "x" * 70000), "longer than"),
    ],
)
def test_a_file_that_is_no_mt940_statement_is_refused(fields: tuple[str, ...], why: str) -> None:
    """No opening balance, an unreadable one, no fields, a field too long: nothing is read."""
    stream = mt940(*fields) if fields else io.BytesIO(b"")
    with pytest.raises(StatementFormatError, match=why):
        list(Mt940Statement(stream).lines())
