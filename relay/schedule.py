"""When to try a delivery again: a pure function of (attempts made, the answer's Retry-After)."""

from __future__ import annotations

import datetime as dt
import email.utils
import re

from relay.errors import ScheduleError

DEFAULT_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")
# A Retry-After beyond a day is a consumer's mistake, not a plan; it is held to this.
MAX_RETRY_AFTER = 86400.0


def parse_schedule(value: str) -> tuple[float, ...]:
    """Seconds of each delay in a list such as `5s,5m,30m,2h` (a bare number is seconds)."""
    delays = []
    for part in value.split(","):
        match = _DURATION.match(part.strip().lower())
        if match is None:
            raise ScheduleError(
                f"{part.strip()!r} is not a duration (a number with s, m, h or d, e.g. 5s,5m,2h)"
            )
        delays.append(float(match[1]) * _UNITS[match[2] or "s"])
    if not delays:
        raise ScheduleError("the retry schedule is empty")
    return tuple(delays)


def parse_retry_after(value: str | None, now: dt.datetime) -> float | None:
    """Seconds a Retry-After header asks to wait (delta-seconds or an HTTP date), or None when
    absent or unreadable; never negative, at most MAX_RETRY_AFTER."""
    if value is None:
        return None
    value = value.strip()
    # ASCII only: "²".isdigit() is true and float("²") raises; "١٢" is not an HTTP number.
    if value.isascii() and value.isdigit():
        return min(float(value), MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return min(max(0.0, (when - now).total_seconds()), MAX_RETRY_AFTER)


def next_delay(
    attempts: int, schedule: tuple[float, ...], *, retry_after: float | None = None
) -> float | None:
    """Seconds until the next attempt after `attempts` failed ones, or None when the schedule
    is spent (the delivery failed for good). A 429/503's Retry-After waits at least that long."""
    if attempts < 1:
        raise ValueError("attempts counts the failed attempts made so far: at least 1")
    if attempts > len(schedule):
        return None
    delay = schedule[attempts - 1]
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay
