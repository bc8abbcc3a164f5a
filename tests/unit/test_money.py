"""The one rule for money typed by people: JSON integers or ASCII digits, 0 to 2^63-1 kobo."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.errors import NumberInputError
from ledger.money import MAX_KOBO, kobo_from_json, kobo_from_text, whole_number_from_text
from tests.support.numbers import HOSTILE_TEXT

HOSTILE_JSON: list[object] = [
    "100",
    "١٠٠",
    "²",
    10.5,
    100.0,
    float("inf"),
    float("nan"),
    True,
    False,
    None,
    -1,
    MAX_KOBO + 1,
    [100],
    {"kobo": 100},
]


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_hostile_text_is_refused(text: str) -> None:
    """Other scripts' digits, signs, separators, fractions and out-of-range text are refused."""
    with pytest.raises(NumberInputError):
        kobo_from_text(text)


@pytest.mark.parametrize("value", HOSTILE_JSON, ids=repr)
def test_hostile_json_values_are_refused(value: object) -> None:
    """Strings (even of digits), decimals, booleans, null, negatives and 2^63 are refused."""
    with pytest.raises(NumberInputError):
        kobo_from_json(value)


def test_the_range_ends_are_accepted_and_the_minimum_applies() -> None:
    """0 and 2^63-1 are money; a minimum of 1 refuses 0 (a payout moves at least one kobo)."""
    assert kobo_from_text("0") == 0 and kobo_from_text(str(MAX_KOBO)) == MAX_KOBO
    assert kobo_from_json(0) == 0 and kobo_from_json(MAX_KOBO) == MAX_KOBO
    assert kobo_from_text(" 007\t") == 7
    with pytest.raises(NumberInputError, match="from 1 to"):
        kobo_from_json(0, minimum=1)
    with pytest.raises(NumberInputError, match="from 1 to"):
        kobo_from_text("0", minimum=1)


def test_errors_say_what_is_wrong() -> None:
    """The message says why: a string in JSON, digits outside 0-9, or the range."""
    with pytest.raises(NumberInputError, match="not a string"):
        kobo_from_json("100")
    with pytest.raises(NumberInputError, match="digits 0-9"):
        kobo_from_text("١٠٠")
    with pytest.raises(NumberInputError, match="9223372036854775807"):
        kobo_from_text("9223372036854775808")


@given(st.integers(min_value=0, max_value=MAX_KOBO))
def test_every_amount_in_range_round_trips(amount: int) -> None:
    """Any amount from 0 to 2^63-1 written in ASCII digits (or as a JSON integer) reads back."""
    assert kobo_from_text(str(amount)) == amount
    assert kobo_from_json(amount) == amount


# Mostly ASCII digits and their look-alikes, so most draws come close to being money.
NEAR_DIGITS = st.text(
    alphabet=st.one_of(st.sampled_from("0123456789 \t_+-.e٠١٢²１𝟏"), st.characters()), max_size=30
)


@given(NEAR_DIGITS)
def test_any_text_is_ascii_digits_in_range_or_refused(text: str) -> None:
    """For any text, the answer is the number its ASCII digits spell, or NumberInputError;
    never another exception and never a number read from other characters."""
    digits = text.strip(" \t")
    spelled = digits != "" and all(char in "0123456789" for char in digits)
    try:
        value = kobo_from_text(text)
    except NumberInputError:
        assert not spelled or int(digits) > MAX_KOBO
    else:
        assert spelled and value == int(digits) and 0 <= value <= MAX_KOBO


@given(st.integers())
def test_whole_numbers_respect_their_bounds(number: int) -> None:
    """A page size or cursor id is taken only inside its bounds."""
    try:
        value = whole_number_from_text(str(number), minimum=1, maximum=500)
    except NumberInputError:
        assert not 1 <= number <= 500
    else:
        assert value == number and 1 <= number <= 500
