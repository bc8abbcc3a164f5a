"""Contract fee schedule parsing."""

from __future__ import annotations

import pytest

from reconcile.fees import parse_fee_schedule


def test_schedule_picks_the_tier_covering_the_amount() -> None:
    """Each amount gets the fee of the tier that covers it."""
    schedule = parse_fee_schedule("0-500000:1000,500001-5000000:2500,5000001-:5000")
    assert schedule.fee_for(0) == 1000
    assert schedule.fee_for(500_000) == 1000
    assert schedule.fee_for(500_001) == 2500
    assert schedule.fee_for(10**15) == 5000


def test_schedule_leaves_gaps_uncovered() -> None:
    """An amount between tiers has no contract fee."""
    schedule = parse_fee_schedule("100-200:5")
    assert schedule.fee_for(50) is None


@pytest.mark.parametrize(
    "text", ["", "abc", "1-2", "5-1:3", "0-10:1,5-20:2", "0-:1,5-9:2", "-5-1:2", "0-1:1.5"]
)
def test_bad_schedules_are_refused(text: str) -> None:
    """Malformed, inverted or overlapping tiers raise ValueError."""
    with pytest.raises(ValueError):
        parse_fee_schedule(text)
