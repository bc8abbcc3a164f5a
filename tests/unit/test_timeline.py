"""The timeline merge: every entry of every source, in time order, ties broken by kind."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from ledger.timeline import Entry, EntryKind, merge

T = dt.datetime(2026, 3, 2, 9, tzinfo=dt.UTC)


def _at(seconds: int, kind: EntryKind, title: str = "", sequence: int = 0) -> Entry:
    return Entry(T + dt.timedelta(seconds=seconds), kind, title or kind.value, sequence=sequence)


def test_entries_of_all_sources_come_out_in_time_order() -> None:
    """Webhooks, checks and findings interleave by time, not by source."""
    webhooks = [_at(10, EntryKind.WEBHOOK, "w1"), _at(40, EntryKind.WEBHOOK, "w2")]
    checks = [_at(30, EntryKind.CHECK, "c2"), _at(20, EntryKind.CHECK, "c1")]
    findings = [_at(25, EntryKind.FINDING, "f1")]
    titles = [e.title for e in merge(webhooks, checks, findings)]
    assert titles == ["w1", "c1", "f1", "c2", "w2"]


def test_at_one_instant_the_cause_comes_before_what_it_caused() -> None:
    """A check, the finding it opened, its alert and an operator's action share an instant:
    they come in that order, and same-kind entries in their row order."""
    same = [
        _at(0, EntryKind.OPERATOR, "ack"),
        _at(0, EntryKind.ALERT, "alert"),
        _at(0, EntryKind.FINDING, "opened", sequence=2),
        _at(0, EntryKind.FINDING, "other", sequence=1),
        _at(0, EntryKind.CHECK, "check"),
    ]
    assert [e.title for e in merge(same)] == ["check", "other", "opened", "alert", "ack"]


def test_no_sources_and_empty_sources_give_an_empty_timeline() -> None:
    """Nothing in, nothing out."""
    assert merge() == [] and merge([], []) == []


entries = st.builds(
    _at,
    st.integers(min_value=0, max_value=50),
    st.sampled_from(list(EntryKind)),
    st.text(max_size=3),
    st.integers(min_value=0, max_value=5),
)


@given(st.lists(st.lists(entries, max_size=8), max_size=5))
def test_the_merge_is_a_sorted_permutation_whatever_the_source_order(
    sources: list[list[Entry]],
) -> None:
    """Every entry appears once, sorted, and reordering the sources changes nothing."""
    merged = merge(*sources)
    assert sorted(merged, key=Entry.sort_key) == merged
    assert sorted(map(repr, merged)) == sorted(repr(e) for s in sources for e in s)
    assert [e.sort_key() for e in merge(*reversed(sources))] == [e.sort_key() for e in merged]
