"""Lagos days → UTC bounds, and the YYYY-MM-DD parsing of --since/--until."""

from __future__ import annotations

import datetime as dt

import pytest

from reconcile.reports.errors import PeriodError
from reconcile.reports.period import Period, lagos_day, lagos_offset_is_fixed, parse_period

UTC = dt.UTC


def test_a_lagos_day_starts_at_23_utc_the_evening_before() -> None:
    """Midnight in Lagos (UTC+1) is 23:00 UTC of the previous day; the end is exclusive."""
    period = parse_period("2025-03-02", "2025-03-02")
    assert period.start == dt.datetime(2025, 3, 1, 23, 0, tzinfo=UTC)
    assert period.end == dt.datetime(2025, 3, 2, 23, 0, tzinfo=UTC)


def test_23_30_utc_belongs_to_the_next_lagos_day() -> None:
    """A transfer at 23:30 UTC is on the following Lagos calendar day."""
    assert lagos_day(dt.datetime(2025, 3, 1, 23, 30, tzinfo=UTC)) == dt.date(2025, 3, 2)
    assert lagos_day(dt.datetime(2025, 3, 1, 22, 59, 59, tzinfo=UTC)) == dt.date(2025, 3, 1)


def test_no_dates_mean_the_whole_ledger() -> None:
    """Empty or missing dates leave both bounds open."""
    period = parse_period(None, "")
    assert (period.start, period.end) == (None, None)
    assert period.as_dict() == {"since": None, "until": None}
    assert period.describe() == "whole ledger"


@pytest.mark.parametrize(
    ("since", "until", "fragment"),
    [
        ("2025-02-30", None, "--since"),
        ("20250301", None, "--since"),
        (None, "2025-3-1", "--until"),
        (None, "tomorrow", "--until"),
        ("2025-03-02", "2025-03-01", "after"),
        ("20250301xx", None, "--since must be a day as YYYY-MM-DD"),
        ("2025-W09-1", None, "--since must be a day as YYYY-MM-DD"),
        ("２０２５-03-01", None, "--since must be a day as YYYY-MM-DD"),
        ("0001-01-01", None, "--since must be a day from 0001-01-02"),
        (None, "9999-12-31", "--until must be a day from 0001-01-02 to 9999-12-30"),
    ],
)
def test_bad_dates_raise_a_period_error_naming_the_option(
    since: str | None, until: str | None, fragment: str
) -> None:
    """Anything but a real YYYY-MM-DD day, or a reversed period, is a PeriodError."""
    with pytest.raises(PeriodError, match=fragment):
        parse_period(since, until)


def test_the_first_and_last_days_have_utc_bounds() -> None:
    """0001-01-02 and 9999-12-30, the extreme days accepted, give bounds that exist in UTC."""
    period = parse_period("0001-01-02", "9999-12-30")
    assert period.start is not None and period.start.year == 1
    assert period.end == dt.datetime(9999, 12, 30, 23, 0, tzinfo=UTC)


def test_the_plus_one_hour_rule_holds_in_the_tz_database() -> None:
    """Lagos is UTC+1 without daylight saving for every date a ledger can hold."""
    assert lagos_offset_is_fixed(1970, 2060)


def test_an_open_ended_period_has_one_bound() -> None:
    """Only --since gives a start and no end."""
    period = Period(since=dt.date(2025, 1, 1))
    assert period.end is None and period.start == dt.datetime(2024, 12, 31, 23, tzinfo=UTC)
