"""The retry schedule: a pure function of (failed attempts, Retry-After)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay.errors import ScheduleError
from relay.schedule import (
    DEFAULT_SCHEDULE,
    MAX_RETRY_AFTER,
    next_delay,
    parse_retry_after,
    parse_schedule,
)

NOW = dt.datetime(2025, 3, 1, 8, 0, tzinfo=dt.UTC)


def test_the_default_schedule_is_eight_attempts_over_about_28_hours() -> None:
    """5s,5m,30m,2h,5h,10h,10h: seven delays after the first attempt, 27.6 hours in all."""
    delays = parse_schedule(DEFAULT_SCHEDULE)
    assert delays == (5, 300, 1800, 7200, 18000, 36000, 36000)
    assert 27 * 3600 < sum(delays) < 29 * 3600


def test_durations_take_units_decimals_and_bare_seconds() -> None:
    """`1.5m`, `2`, `1d` and upper case are read; spaces around commas are fine."""
    assert parse_schedule(" 1.5m, 2 ,1D,3h ") == (90, 2, 86400, 10800)


@pytest.mark.parametrize("value", ["", "5s,,5m", "5x", "-5s", "five", "5 s", "1e3"])
def test_bad_schedules_are_schedule_errors(value: str) -> None:
    """An empty part, an unknown unit, a sign or a word is a ScheduleError."""
    with pytest.raises(ScheduleError):
        parse_schedule(value)


def test_next_delay_walks_the_schedule_then_gives_up() -> None:
    """After n failed attempts the delay is the n-th; after the last, None (failed for good)."""
    schedule = (1.0, 2.0, 3.0)
    assert [next_delay(n, schedule) for n in (1, 2, 3, 4, 10)] == [1.0, 2.0, 3.0, None, None]


def test_retry_after_lengthens_but_never_shortens_a_delay() -> None:
    """A Retry-After above the schedule's delay wins; one below it does not."""
    assert next_delay(1, (5.0,), retry_after=60.0) == 60.0
    assert next_delay(1, (5.0,), retry_after=1.0) == 5.0
    assert next_delay(1, (5.0,), retry_after=0.0) == 5.0


def test_retry_after_does_not_extend_a_spent_schedule() -> None:
    """After the last attempt a Retry-After does not buy another one."""
    assert next_delay(2, (5.0,), retry_after=60.0) is None


def test_zero_attempts_is_a_caller_mistake() -> None:
    """next_delay counts failed attempts made, so 0 or fewer is a ValueError."""
    for attempts in (0, -1):
        with pytest.raises(ValueError, match="at least 1"):
            next_delay(attempts, (5.0,))


def test_retry_after_in_seconds_is_capped_at_a_day() -> None:
    """Delta-seconds are read as given, at most MAX_RETRY_AFTER."""
    assert parse_retry_after("120", NOW) == 120.0
    assert parse_retry_after(" 0 ", NOW) == 0.0
    assert parse_retry_after("99999999", NOW) == MAX_RETRY_AFTER


def test_retry_after_as_an_http_date_is_the_time_until_then() -> None:
    """An HTTP date 90 s ahead is 90 s; one in the past is 0."""
    assert parse_retry_after("Sat, 01 Mar 2025 08:01:30 GMT", NOW) == 90.0
    assert parse_retry_after("Sat, 01 Mar 2025 07:00:00 GMT", NOW) == 0.0
    assert parse_retry_after("Sun, 01 Mar 2026 08:00:00 GMT", NOW) == MAX_RETRY_AFTER


@pytest.mark.parametrize("value", [None, "", "soon", "-5", "1.5", "Mon, 99 Foo 2025", "١٢", "²"])
def test_unreadable_retry_after_is_none(value: str | None) -> None:
    """Absent, negative, fractional, non-ASCII digits or garbage: no Retry-After at all."""
    assert parse_retry_after(value, NOW) is None


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_retry_after_never_raises(value: str) -> None:
    """Whatever a consumer sends as Retry-After is a delay in [0, a day] or None."""
    delay = parse_retry_after(value, NOW)
    assert delay is None or 0.0 <= delay <= MAX_RETRY_AFTER
