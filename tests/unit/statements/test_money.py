"""Statement money: naira, kobo, MT940 and XML amount texts and XLSX cells become exact kobo."""

from __future__ import annotations

import decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statements.errors import FieldValueError
from statements.money import (
    MAX_KOBO,
    Amounts,
    kobo_from_cell,
    kobo_from_kobo_text,
    kobo_from_mt940,
    kobo_from_naira,
    kobo_from_xml,
)


@pytest.mark.parametrize(
    ("text", "kobo"),
    [
        ("1,250.50", 125050),
        ("1250", 125000),
        ("-3.5", -350),
        ("(3.50)", -350),
        ("0.05", 5),
        (" 1,000,000.00 ", 100000000),
        ("-0.00", 0),
        ("007.10", 710),
    ],
)
def test_naira_text_becomes_exact_kobo(text: str, kobo: int) -> None:
    """Thousands separators, one or two decimals, a minus or brackets give the exact kobo."""
    assert kobo_from_naira(text) == kobo


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("12.345", "more than two decimals"),
        ("", "not an amount"),
        ("abc", "not an amount"),
        ("NaN", "not an amount"),
        ("1e3", "not an amount"),
        ("1,25.00", "not an amount"),
        ("1,000000.00", "not an amount"),
        ("12,50", "not an amount"),
        (".5", "not an amount"),
        ("5.", "not an amount"),
        ("+5", "not an amount"),
        ("--5", "not an amount"),
        ("١٠٠", "not an amount"),
        ("₦100", "not an amount"),
        ("9" * 30, "too large"),
    ],
)
def test_bad_naira_text_is_refused_with_the_reason(text: str, why: str) -> None:
    """Misplaced separators, three decimals, letters, exponents, other digits are refused."""
    with pytest.raises(FieldValueError, match=why):
        kobo_from_naira(text)


@given(st.integers(min_value=-MAX_KOBO, max_value=MAX_KOBO))
def test_naira_formatted_from_any_kobo_reads_back_exactly(kobo: int) -> None:
    """Kobo formatted as naira with separators and two decimals parses back to itself."""
    sign = "-" if kobo < 0 else ""
    naira, rest = divmod(abs(kobo), 100)
    assert kobo_from_naira(f"{sign}{naira:,}.{rest:02d}") == kobo
    assert kobo_from_naira(f"{sign}{naira}.{rest:02d}") == kobo


def test_kobo_text_is_digits_with_an_optional_minus() -> None:
    """Kobo text is ASCII digits (and a minus); decimals, commas and brackets are refused."""
    assert kobo_from_kobo_text("125050") == 125050
    assert kobo_from_kobo_text("-5") == -5
    for text in ("1,250", "12.5", "(5)", "", "١٠"):
        with pytest.raises(FieldValueError, match="whole number of kobo"):
            kobo_from_kobo_text(text)


def test_mt940_and_xml_amounts() -> None:
    """MT940 amounts use a decimal comma (which may end them); XML ones a dot; both at most
    two decimals and no sign."""
    assert kobo_from_mt940("12500,00") == 1250000
    assert kobo_from_mt940("100,") == 10000
    assert kobo_from_mt940("0,5") == 50
    for text in ("12500.00", "1,001", "-1,00", "1,000,00", "12500"):
        with pytest.raises(FieldValueError):
            kobo_from_mt940(text)
    assert kobo_from_xml("12500.00") == 1250000
    assert kobo_from_xml("7") == 700
    for text in ("12,500.00", "1.001", "-1.00", "1e2"):
        with pytest.raises(FieldValueError):
            kobo_from_xml(text)


def test_xlsx_number_cells_never_go_through_float_arithmetic() -> None:
    """0.1 naira is 10 kobo (not 10.000000000000002), ints are naira, text is read as text;
    a cell in kobo must be whole."""
    assert kobo_from_cell(0.1, Amounts.NAIRA) == 10
    assert kobo_from_cell(1250.5, Amounts.NAIRA) == 125050
    assert kobo_from_cell(12500, Amounts.NAIRA) == 1250000
    assert kobo_from_cell(decimal.Decimal("2.25"), Amounts.NAIRA) == 225
    assert kobo_from_cell("1,250.50", Amounts.NAIRA) == 125050
    assert kobo_from_cell(125050, Amounts.KOBO) == 125050
    assert kobo_from_cell(-3.5, Amounts.NAIRA) == -350


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (0.001, "more than two decimals"),
        (float("nan"), "not an amount"),
        (float("inf"), "not an amount"),
        (True, "not an amount"),
        (1e30, "too large"),
    ],
)
def test_bad_xlsx_cells_are_refused(value: object, why: str) -> None:
    """Three decimals, NaN, infinities, booleans and huge numbers are no amount."""
    with pytest.raises(FieldValueError, match=why):
        kobo_from_cell(value, Amounts.NAIRA)
    with pytest.raises(FieldValueError, match="a fraction"):
        kobo_from_cell(1.5, Amounts.KOBO)
