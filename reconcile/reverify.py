"""Re-verification of confirmed successes: the ages of PAYRECON_REVERIFY_AFTER (pure).

docs/rules.md (Reversals): a transfer the provider confirmed `successful` is looked up again at
each listed age after its confirmation, as ordinary due work. The schedule lives in two
columns: `reverify_done` (ages already looked at) and `next_check_at` (confirmation + the next
age), so the reconciler's due query stays the one index range it always was and a settled
transfer past the last age is never due again.
"""

from __future__ import annotations

import datetime as dt
import re

DEFAULT_REVERIFY_AFTER = "1h,24h,72h"
OFF = "off"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_AGE = re.compile(r"(\d{1,9})([smhd]?)")
# Ten years: an age beyond it is a typing mistake, and datetime arithmetic stays in range.
_LONGEST = 10 * 366 * 86400
_MOST_AGES = 32


def parse_ages(value: str) -> tuple[int, ...]:
    """Seconds of each age in a list such as `1h,24h,72h` (a bare number is seconds; `off`
    is none); ValueError says which item is wrong. The ages must grow strictly."""
    text = value.strip().lower()
    if text == OFF:
        return ()
    ages: list[int] = []
    for part in text.split(","):
        match = _AGE.fullmatch(part.strip())
        if match is None or not part.strip().isascii():
            raise ValueError(
                f"{part.strip()!r} is not an age (whole number with s, m, h or d, e.g. "
                f"{DEFAULT_REVERIFY_AFTER}; or {OFF})"
            )
        seconds = int(match[1]) * _UNITS[match[2] or "s"]
        if not 0 < seconds <= _LONGEST:
            raise ValueError(f"{part.strip()!r} must be more than 0 and at most 3660d")
        if ages and seconds <= ages[-1]:
            raise ValueError(f"{part.strip()!r} is not later than the age before it")
        ages.append(seconds)
    if len(ages) > _MOST_AGES:
        raise ValueError(f"at most {_MOST_AGES} ages")
    return tuple(ages)


def ages_passed(
    confirmed_at: dt.datetime, now: dt.datetime, ages: tuple[int, ...], done: int
) -> int:
    """How many ages are behind the transfer at `now` (never fewer than `done`): a late pass
    looks once for every age it missed, which keeps the cost bound."""
    elapsed = (now - confirmed_at).total_seconds()
    return max(done, sum(1 for age in ages if age <= elapsed))


def next_reverify_in(
    confirmed_at: dt.datetime, now: dt.datetime, ages: tuple[int, ...], done: int
) -> float | None:
    """Seconds from `now` to the next age not yet looked at, or None after the last one."""
    if done >= len(ages):
        return None
    due = confirmed_at + dt.timedelta(seconds=ages[done])
    return max(0.0, (due - now).total_seconds())
