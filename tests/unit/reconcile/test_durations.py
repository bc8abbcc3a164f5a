"""Durations in the words people read: seconds, minutes, hours."""

from __future__ import annotations

import pytest

from reconcile.durations import describe_duration


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0, "0 s"),
        (5, "5 s"),
        (59, "59 s"),
        (60, "1 min"),
        (90, "1 min 30 s"),
        (1800, "30 min"),
        (3600, "1 h"),
        (5400, "1 h 30 min"),
        (86_400, "24 h"),
    ],
)
def test_durations_read_in_the_largest_sensible_unit(seconds: int, words: str) -> None:
    """Below a minute in seconds, below an hour in minutes (and seconds), else hours."""
    assert describe_duration(seconds) == words
