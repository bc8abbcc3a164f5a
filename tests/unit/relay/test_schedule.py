"""The retry schedule and Retry-After: pure functions of (attempts, answer)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relay.errors import ScheduleError
from relay.schedule import MAX_RETRY_AFTER, next_delay, parse_retry_after, parse_schedule

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)


def test_the_default_schedule_reads_as_seven_delays_in_seconds() -> None:
    """`5s,5m,30m,2h,5h,10h,10h` is seven delays: eight attempts over about 28 hours."""
    delays = parse_schedule("5s,5m,30m,2h,5h,10h,10h")
    assert delays == (5, 300, 1800, 7200, 18000, 36000, 36000)
    assert 27 * 3600 < sum(delays) < 29 * 3600


def test_a_bare_number_is_seconds_and_fractions_are_kept() -> None:
    """`0.1s,2` is 0.1 and 2 seconds."""
    assert parse_schedule("0.1s, 2") == (0.1, 2.0)


@pytest.mark.parametrize("value", ["", "5x", "s", "-1s", "5s,,5m"])
def test_a_malformed_schedule_is_refused(value: str) -> None:
    """Anything but a comma list of durations is a ScheduleError."""
    with pytest.raises(ScheduleError):
        parse_schedule(value)


def test_next_delay_walks_the_schedule_then_is_spent() -> None:
    """After attempt n the delay is the n-th entry; past the last there is none."""
    schedule = (1.0, 2.0)
    assert [next_delay(n, schedule) for n in (1, 2, 3)] == [1.0, 2.0, None]


def test_retry_after_waits_at_least_that_long_but_never_less_than_the_schedule() -> None:
    """Retry-After raises a delay and never shortens one."""
    assert next_delay(1, (5.0,), retry_after=60.0) == 60.0
    assert next_delay(1, (5.0,), retry_after=1.0) == 5.0
    assert next_delay(2, (5.0,), retry_after=60.0) is None


def test_retry_after_reads_seconds_and_http_dates() -> None:
    """Delta-seconds, an HTTP date (past dates are 0), junk and absence."""
    assert parse_retry_after("120", NOW) == 120.0
    assert parse_retry_after("Mon, 23 Nov 2026 12:01:00 GMT", NOW) == 60.0
    assert parse_retry_after("Mon, 23 Nov 2026 11:00:00 GMT", NOW) == 0.0
    assert parse_retry_after("soon", NOW) is None
    assert parse_retry_after(None, NOW) is None


@given(st.integers(min_value=0, max_value=10**12))
def test_retry_after_is_held_to_a_day(seconds: int) -> None:
    """However large a Retry-After, it waits at most MAX_RETRY_AFTER."""
    value = parse_retry_after(str(seconds), NOW)
    assert value is not None and 0 <= value <= MAX_RETRY_AFTER
