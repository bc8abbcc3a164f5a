"""Event ids: `evt_` ULIDs that sort by time and do not collide."""

from __future__ import annotations

import re

from ledger.events.ids import new_event_id
from relay.queries import EVENT_ID


def test_ids_are_evt_and_26_crockford_characters() -> None:
    """Every id matches the shape the admin API accepts in `/api/events/{id}`."""
    for _ in range(100):
        assert EVENT_ID.match(new_event_id())
    assert re.fullmatch(r"evt_[0-9A-Z]{26}", new_event_id(0))


def test_ids_sort_by_their_millisecond() -> None:
    """An id of a later millisecond sorts after one of an earlier millisecond, as text."""
    times = [0, 1, 999, 1_700_000_000_000, 1_700_000_000_001, 2**48 - 1]
    ids = [new_event_id(ms) for ms in times]
    assert ids == sorted(ids)


def test_ids_of_one_millisecond_do_not_collide() -> None:
    """10,000 ids made in the same millisecond are all different."""
    assert len({new_event_id(1_700_000_000_000) for _ in range(10_000)}) == 10_000
