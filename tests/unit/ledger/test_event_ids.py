"""Event ids (ledger/events/ids.py): `evt_` and a ULID in Crockford's base32, sortable by time,
of the shape the admin API accepts, and never colliding."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ledger.events.ids import PREFIX, new_event_id
from relay.queries import EVENT_ID

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def reference_ulid(millis: int, random: bytes) -> str:
    """The ULID spelled one character at a time, as its specification describes it."""
    value = (millis << 80) | int.from_bytes(random)
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


@given(millis=st.integers(0, 2**48 - 1), random=st.binary(min_size=10, max_size=10))
def test_an_id_is_the_ulid_of_its_time_and_random_bits(millis: int, random: bytes) -> None:
    """The id is `evt_` and the 26-character ULID of its milliseconds and 80 random bits."""
    assert new_event_id(millis, random) == PREFIX + reference_ulid(millis, random)


def test_ids_are_evt_and_26_crockford_characters() -> None:
    """Every id matches the shape the admin API accepts in `/api/events/{id}`."""
    for _ in range(100):
        assert EVENT_ID.match(new_event_id())
    assert re.fullmatch(r"evt_[0-9A-Z]{26}", new_event_id(0))
    fresh = {new_event_id() for _ in range(1000)}
    assert all(len(i) == 30 and set(i[4:]) <= set(CROCKFORD) for i in fresh)


def test_ids_sort_by_their_millisecond() -> None:
    """An id of a later millisecond sorts after one of an earlier millisecond, as text,
    whatever their random bits."""
    times = [0, 1, 999, 1_700_000_000_000, 1_700_000_000_001, 2**48 - 1]
    ids = [new_event_id(ms) for ms in times]
    assert ids == sorted(ids)
    assert new_event_id(1_000, b"\xff" * 10) < new_event_id(1_001, b"\x00" * 10)


def test_ids_do_not_collide() -> None:
    """10,000 ids made in the same millisecond, and 1,000 fresh ones, are all different."""
    assert len({new_event_id(1_700_000_000_000) for _ in range(10_000)}) == 10_000
    assert len({new_event_id() for _ in range(1000)}) == 1000
