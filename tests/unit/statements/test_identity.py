"""Line identity: the same movement has the same key in every export that holds its day."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statements.errors import StatementFormatError
from statements.identity import line_identities
from statements.lines import Direction, ParsedLine

START = dt.date(2026, 11, 1)


def test_identical_lines_of_a_day_get_distinct_keys_and_other_accounts_differ() -> None:
    """Two identical fee lines of one day are two movements; the account is in the key."""
    fee = ParsedLine(2, START, None, 1075, Direction.DEBIT, None, "TRF_A", "Fee")
    again = ParsedLine(3, START, None, 1075, Direction.DEBIT, None, "TRF_A", "Fee")
    first, second = line_identities([fee, again], account="wallet")
    assert first != second and len(first) == 64
    assert list(line_identities([fee], account="wallet")) == [first]
    assert list(line_identities([fee], account="bank")) != [first]
    # The line number and narration are not part of who the movement is.
    moved = ParsedLine(9, START, START, 1075, Direction.DEBIT, None, " TRF_A ", "other")
    assert list(line_identities([moved], account="wallet")) == [first]


def test_a_day_whose_lines_are_not_together_is_refused() -> None:
    """Lines of a day after another day's would be counted twice: refused, naming the line."""
    day1 = ParsedLine(2, START, None, 1, Direction.DEBIT, None, "R", "N")
    day2 = ParsedLine(3, START + dt.timedelta(days=1), None, 1, Direction.DEBIT, None, "R", "N")
    back = ParsedLine(4, START, None, 1, Direction.DEBIT, None, "R", "N")
    with pytest.raises(StatementFormatError, match="line 4: dated 2026-11-01 after"):
        list(line_identities([day1, day2, back], account="wallet"))


@st.composite
def statements(draw: st.DrawFn) -> list[ParsedLine]:
    """A statement in date order whose lines often repeat (few amounts and references), with
    or without running balances."""
    moves = draw(
        st.lists(
            st.tuples(
                st.integers(0, 3),  # days after the previous line
                st.sampled_from([100, 1075, 250000]),
                st.sampled_from(list(Direction)),
                st.sampled_from(["TRF_A", "TRF_B", ""]),
            ),
            max_size=40,
        )
    )
    with_balance = draw(st.booleans())
    day, balance, lines = START, 0, []
    for number, (gap, amount, direction, reference) in enumerate(moves, start=2):
        day += dt.timedelta(days=gap)
        balance += amount if direction is Direction.CREDIT else -amount
        lines.append(
            ParsedLine(
                number,
                day,
                None,
                amount,
                direction,
                balance if with_balance else None,
                reference,
                "N",
            )
        )
    return lines


@given(statements(), st.data())
def test_overlapping_exports_yield_the_keys_of_the_whole_statement(
    lines: list[ParsedLine], data: st.DataObject
) -> None:
    """Any split into exports that each start at the start of a day and end anywhere,
    overlapping or touching: their keys together are exactly the whole statement's."""
    whole = list(line_identities(lines, account="wallet"))
    assert len(set(whole)) == len(whole)
    day_starts = [i for i, line in enumerate(lines) if i == 0 or lines[i - 1].date != line.date]
    union: set[str] = set()
    covered = 0
    while covered < len(lines):
        # The next export starts at a day start at or before the first line not yet covered.
        start = data.draw(st.sampled_from([i for i in day_starts if i <= covered]))
        end = data.draw(st.integers(covered + 1, len(lines)))
        union.update(line_identities(lines[start:end], account="wallet"))
        covered = end
    assert union == set(whole)
