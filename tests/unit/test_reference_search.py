"""Reference search keys and the amount-sorted queue's cursor (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import column

from ledger.finding_stakes import decode_amount_cursor, encode_amount_cursor
from ledger.reference_search import prefix_range, search_key


def test_a_search_key_upper_cases_ascii_letters_only_like_sqlite() -> None:
    """Stripped, ASCII letters upper-cased, everything else (é, ß, digits, dashes) kept."""
    assert search_key("  inv-2026-é ß ") == "INV-2026-é ß"


@given(st.text(min_size=1, max_size=20), st.text(max_size=20))
def test_every_key_starting_with_the_prefix_is_inside_its_range(prefix: str, rest: str) -> None:
    """Python's string order is code-point order (SQLite's BINARY, PostgreSQL's C collation):
    prefix + anything lies in [prefix, upper bound); the bound itself does not start with it."""
    condition = prefix_range(column("k"), prefix)
    low = condition.clauses[0].right.value if hasattr(condition, "clauses") else prefix
    assert low == prefix
    if hasattr(condition, "clauses"):
        high = condition.clauses[1].right.value
        assert prefix <= prefix + rest < high
        assert not high.startswith(prefix)


def test_amount_cursors_round_trip_and_refuse_anything_else() -> None:
    """A cursor gives back its amount and id; foreign, negative, oversized, non-ASCII digit
    and truncated cursors are ValueError."""
    assert decode_amount_cursor(encode_amount_cursor(123_456, 42)) == (123_456, 42)
    import base64

    def raw(text: str) -> str:
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    for bad in [
        "",
        "!!",
        raw("f:42"),
        raw("fa:1"),
        raw("fa:-1:2"),
        raw("fa:1:0"),
        raw("fa:1:" + "9" * 25),
        raw("fa:١:2"),
        raw("fa:1:2:3"),
        raw("t:1:2"),
    ]:
        with pytest.raises(ValueError):
            decode_amount_cursor(bad)
