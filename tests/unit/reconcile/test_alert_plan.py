"""The alert plan (grouping by kind, the hourly cap) and the grouped texts, pure."""

from __future__ import annotations

import datetime as dt

from reconcile.alert_group_text import grouped_alert, when
from reconcile.alert_plan import AlertRules, Item, plan


def _items(kind: str, count: int) -> list[Item]:
    return [Item(f"{kind}:{n}", kind, "t", "b", reference=f"{kind}-{n}") for n in range(count)]


def test_kinds_beyond_the_threshold_group_and_the_rest_stay_single() -> None:
    """Six of one kind become one message; five of another stay five."""
    decided = plan(_items("a", 6) + _items("b", 5), AlertRules(group_after=5), sent_this_hour=0)
    assert [(m.kind, m.grouped, len(m.items)) for m in decided.messages] == [("a", True, 6)] + [
        ("b", False, 1)
    ] * 5
    assert decided.suppressed == []


def test_the_hours_budget_holds_back_whole_messages() -> None:
    """Past the cap, later messages' items are suppressed, none lost."""
    decided = plan(_items("a", 3) + _items("b", 9), AlertRules(max_per_hour=10), sent_this_hour=8)
    assert len(decided.messages) == 2
    assert [i.key for i in decided.suppressed] == ["a:2"] + [f"b:{n}" for n in range(9)]


def test_grouped_text_names_ten_references_and_the_money_in_naira() -> None:
    """The grouped alert says how many, the naira at stake and the first ten references."""
    title, body = grouped_alert(
        "fee_mismatch",
        noun="transfer",
        references=[f"R{n}" for n in range(12)],
        at_stake=123_456,
        console_url=None,
    )
    assert title == "payrecon: 12 × fee mismatch (transfers)"
    assert "₦1,234.56" in body and "R9 and 2 more" in body and "R10" not in body
    assert "payrecon findings list --open --kind fee_mismatch" in body


def test_times_say_their_zone() -> None:
    """Times in alerts give UTC and Lagos time."""
    assert (
        when(dt.datetime(2026, 3, 1, 23, 30, tzinfo=dt.UTC)) == "2026-03-01 23:30 UTC (00:30 Lagos)"
    )
