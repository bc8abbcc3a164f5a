"""Event ids: `evt_` and a ULID in Crockford's base32, sortable by time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ledger.events.ids import PREFIX, new_event_id

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def reference_ulid(millis: int, random: bytes) -> str:
    """The ULID spelled one character at a time, as its specification describes it."""
    value = (millis << 80) | int.from_bytes(random)
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


@given(millis=st.integers(0, 2**48 - 1), random=st.binary(min_size=10, max_size=10))
def test_an_id_is_the_ulid_of_its_time_and_random_bits(millis: int, random: bytes) -> None:
    """The id is `evt_` and the 26-character ULID of its milliseconds and 80 random bits."""
    assert new_event_id(millis, random) == PREFIX + reference_ulid(millis, random)


def test_ids_sort_by_time_and_do_not_repeat() -> None:
    """A later millisecond sorts after an earlier one; fresh ids differ."""
    assert new_event_id(1_000, b"\xff" * 10) < new_event_id(1_001, b"\x00" * 10)
    fresh = {new_event_id() for _ in range(1000)}
    assert len(fresh) == 1000
    assert all(len(i) == 30 and set(i[4:]) <= set(CROCKFORD) for i in fresh)
