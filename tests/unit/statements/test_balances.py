"""The balance chain: every gap named by the lines around it, with the difference in kobo."""

from __future__ import annotations

import datetime as dt

from statements.balances import BalanceBreak, balance_breaks
from statements.lines import Direction, ParsedLine, StatedBalances

DAY = dt.date(2026, 11, 26)


def line(number: int, signed: int, balance: int | None) -> ParsedLine:
    """A line moving `signed` kobo (negative: a debit) and stating `balance`."""
    direction = Direction.CREDIT if signed > 0 else Direction.DEBIT
    return ParsedLine(number, DAY, None, abs(signed), direction, balance, "R", "N")


def test_an_unbroken_chain_has_no_breaks() -> None:
    """Balances that follow the amounts, from the opening to the closing, break nowhere."""
    lines = [line(2, -100, 900), line(3, 50, 950), line(4, -950, 0)]
    assert list(balance_breaks(lines, StatedBalances(1000, 0))) == []
    assert list(balance_breaks(lines)) == []


def test_a_missing_line_is_one_break_naming_the_lines_around_it() -> None:
    """A debit of 10,75 naira missing between lines 3 and 4: one break there, -1075 kobo."""
    lines = [line(2, -100_000, 900_000), line(3, -1_250_000, -350_000), line(4, 500_000, 148_925)]
    (gap,) = balance_breaks(lines)
    assert gap == BalanceBreak(after_line=3, before_line=4, expected=150_000, stated=148_925)
    assert gap.difference == -1075


def test_breaks_against_the_opening_and_the_closing_balance() -> None:
    """The first line against the stated opening, the last balance against the closing."""
    lines = [line(5, -100, 850), line(6, -50, 800)]
    assert list(balance_breaks(lines, StatedBalances(opening=1000, closing=700))) == [
        BalanceBreak(None, 5, 900, 850),
        BalanceBreak(6, None, 800, 700),
    ]


def test_lines_without_balances_carry_the_chain() -> None:
    """Computed through lines with no balance; no opening and no balances: nothing to check."""
    lines = [line(2, -100, 900), line(3, -100, None), line(4, -100, 650)]
    assert list(balance_breaks(lines)) == [BalanceBreak(3, 4, 700, 650)]
    assert list(balance_breaks([line(2, 5, None)], StatedBalances(closing=99))) == []
    assert list(balance_breaks([], StatedBalances(opening=10, closing=12))) == [
        BalanceBreak(None, None, 10, 12)
    ]
