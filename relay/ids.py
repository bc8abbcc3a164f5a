"""Event ids: `evt_` and a ULID (48 bits of milliseconds, 80 random bits, Crockford base32),
so ids sort by creation time and never collide between processes."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's base32: no I, L, O, U
PREFIX = "evt_"


def new_event_id(now_ms: int | None = None) -> str:
    """A new `evt_` id; `now_ms` (unix milliseconds) for tests, else the clock."""
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    value = (millis << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return PREFIX + "".join(reversed(chars))
