"""Collection requests are checked before anything is written or sent (issue 16 rules)."""

from __future__ import annotations

from typing import Any

import pytest

from payments.collections import CollectionRequest, validate
from payments.errors import CollectionInputError

GOOD: dict[str, Any] = {"reference": "COL-1", "amount": 500_000}


def test_a_plain_request_passes_without_warnings() -> None:
    """Reference and amount alone are enough, and nothing is odd about them."""
    assert validate(CollectionRequest(**GOOD)) == []


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"amount": 0}, "amount"),
        ({"amount": -5}, "amount"),
        ({"amount": 10.5}, "amount"),
        ({"amount": True}, "amount"),
        ({"amount": "100"}, "amount"),
        ({"amount": 2**63}, "amount"),
        ({"currency": "USD"}, "currency"),
        ({"currency": "ngn"}, "currency"),
        ({"reference": ""}, "reference"),
        ({"reference": "   "}, "reference"),
        ({"reference": "R" * 101}, "reference"),
        ({"reference": "A\x00B"}, "reference"),
        ({"reference": "A\nB"}, "reference"),
        ({"reference": " padded"}, "reference"),
        ({"reference": "\ud800"}, "reference"),
        ({"reference": 42}, "reference"),
        ({"customer_email": "no-at-sign"}, "customer_email"),
        ({"customer_email": "a@b"}, "customer_email"),
        ({"customer_email": "a@b.c" + "x" * 300}, "customer_email"),
        ({"customer_name": "N" * 201}, "customer_name"),
        ({"customer_name": "<script>\x07"}, "customer_name"),
        ({"customer_phone": "0" * 33}, "customer_phone"),
    ],
)
def test_malformed_fields_are_refused_by_name(changes: dict[str, Any], field: str) -> None:
    """Each malformed value is refused with the field that holds it."""
    with pytest.raises(CollectionInputError) as caught:
        validate(CollectionRequest(**{**GOOD, **changes}))
    assert caught.value.field == field


def test_a_hundred_character_reference_is_accepted() -> None:
    """The limit is inclusive: exactly 100 characters pass."""
    assert validate(CollectionRequest(**{**GOOD, "reference": "R" * 100})) == []


@pytest.mark.parametrize("phone", ["08031234567", "+234 803 123 4567", "(0803) 123-4567"])
def test_usual_phone_shapes_pass_quietly(phone: str) -> None:
    """Nigerian numbers as people write them raise no warning."""
    assert validate(CollectionRequest(**GOOD, customer_phone=phone)) == []


def test_an_odd_phone_only_warns() -> None:
    """A phone that does not look like one is sent as given, with a warning naming it."""
    warnings = validate(CollectionRequest(**GOOD, customer_phone="call me"))
    assert len(warnings) == 1 and "call me" in warnings[0]


def test_a_loose_email_passes() -> None:
    """An address with one @ and a dotted domain is accepted."""
    assert validate(CollectionRequest(**GOOD, customer_email="ada+shop@mail.example.ng")) == []
