"""Event ids: `evt_` and a ULID (48 bits of milliseconds, 80 random bits, Crockford base32),
so ids sort by creation time and never collide between processes."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's base32: no I, L, O, U
# Two characters for every 10 bits: the receiver's batch makes two ids per delivery, and a
# lookup per pair costs a fraction of a division per character.
_PAIRS = tuple(high + low for high in _ALPHABET for low in _ALPHABET)
_SHIFTS = tuple(range(120, -1, -10))  # 13 pairs: the 130 bits of 26 characters
PREFIX = "evt_"


def new_event_id(now_ms: int | None = None, random: bytes | None = None) -> str:
    """A new `evt_` id; `now_ms` (unix milliseconds) and `random` (10 bytes) for tests, else
    the clock and os.urandom."""
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    value = (millis << 80) | int.from_bytes(os.urandom(10) if random is None else random)
    return PREFIX + "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS])
