"""The fast readings of the common case (`statements.money.plain_naira`, the table's quick
row) agree with the full readings on every text, and leave everything else to them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statements.errors import FieldValueError
from statements.lines import InvalidLine, ParsedLine
from statements.mapping import load_mapping
from statements.money import kobo_from_naira, plain_naira
from statements.table import _line, _Positions, read_rows

# Texts near the money grammar: digits, separators, signs, spaces, other scripts' digits.
MONEYISH = st.text(alphabet="0123456789,.-() ٣\u00b2", max_size=14)
# A cell of an amount column: mostly well-formed naira or empty, sometimes anything.
CELLS = st.one_of(
    st.just(""),
    st.integers(0, 10**9).map(lambda kobo: f"{kobo // 100:,}.{kobo % 100:02d}"),
    MONEYISH,
)
DATES = st.sampled_from(["2026-11-02", "2026-11-31", "", " 2026-11-03 ", "02/11/2026"])


def _full(text: str) -> int | None:
    try:
        return kobo_from_naira(text)
    except FieldValueError:
        return None


@given(MONEYISH)
def test_plain_naira_reads_only_what_the_full_reading_reads_and_the_same_kobo(text: str) -> None:
    """Where the quick reading gives kobo, the full one gives the same kobo."""
    quick = plain_naira(text)
    if quick is not None:
        assert quick == _full(text)


@pytest.mark.parametrize(
    ("text", "kobo"),
    [("1.5", 150), ("1.05", 105), ("007", 700), ("1,250.50", 125050), ("0,123", 12300)],
)
def test_plain_naira_reads_one_or_two_decimals_and_leading_zeros(text: str, kobo: int) -> None:
    """One decimal is tens of kobo, and the quick reading agrees with the full one."""
    assert plain_naira(text) == kobo == _full(text)


@pytest.mark.parametrize("text", ["1.", ".5", "1.234", "-1", "(1)", "1,23", "1,2345", "١٢", "+1"])
def test_plain_naira_leaves_the_rest_to_the_full_reading(text: str) -> None:
    """Signs, misplaced commas, three decimals and other scripts' digits are not read quickly."""
    assert plain_naira(text) is None


@given(st.integers(0, 10**15))
def test_plain_naira_reads_every_naira_figure_the_exports_write(kobo: int) -> None:
    """Naira with thousands separators and two decimals, as banks write it, is read quickly."""
    text = f"{kobo // 100:,}.{kobo % 100:02d}"
    assert plain_naira(text) == kobo == _full(text)
    assert plain_naira(text.replace(",", "")) == kobo


@given(
    st.lists(
        st.tuples(DATES, DATES, CELLS, CELLS, CELLS, st.sampled_from(["REF-1", " x "])),
        max_size=8,
    )
)
def test_the_quick_row_is_the_full_rows_reading(
    rows: list[tuple[str, str, str, str, str, str]],
) -> None:
    """Every row, quick or not, reads as `_line` reads it (the same line or the same error)."""
    mapping = load_mapping("sandbox")
    header = ["Date", "Value Date", "Reference", "Narration", "Debit", "Credit", "Balance"]
    table = [(1, header)] + [
        (number, [date, value, reference, "narration", debit, credit, balance])
        for number, (date, value, debit, credit, balance, reference) in enumerate(rows, start=2)
    ]
    positions = _Positions(
        {key: header.index(text) for key, text in mapping.columns.named().items()}
    )
    expected: list[ParsedLine | InvalidLine] = [
        _line(number, cells, positions, mapping)
        for number, cells in table[1:]
        if any(cell.strip() for cell in cells)
    ]
    assert list(read_rows(table, mapping)) == expected
