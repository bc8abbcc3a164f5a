"""JSON bodies built to hurt the parser are refused as MalformedBodyError (400), never a 500."""

from __future__ import annotations

import pytest

from web.errors import MalformedBodyError
from web.jsonbody import MAX_DEPTH, nesting_depth, parse_json


def test_nesting_past_the_limit_is_refused_before_parsing() -> None:
    """Arrays or objects nested deeper than MAX_DEPTH are refused; at the limit they parse."""
    at_limit = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert nesting_depth(at_limit) == MAX_DEPTH and isinstance(parse_json(at_limit), list)
    for deep in (b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 5_000 + b"1" + b"}" * 5_000):
        with pytest.raises(MalformedBodyError):
            parse_json(deep)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    """Many brackets inside a string (escaped quotes included) are text, not depth."""
    raw = b'{"note": "' + b"[{" * 200 + b'\\"]"}'
    assert nesting_depth(raw) == 1
    assert parse_json(raw)["note"].startswith("[{")


@pytest.mark.parametrize("raw", [b"{", b"\xff", b'"\\ud800"', b"1" * 5000])
def test_broken_json_lone_surrogates_and_huge_numbers_are_refused(raw: bytes) -> None:
    """Unfinished JSON, bytes that are not UTF-8, half a surrogate pair and an integer of
    5,000 digits are each MalformedBodyError."""
    with pytest.raises(MalformedBodyError):
        parse_json(raw)
