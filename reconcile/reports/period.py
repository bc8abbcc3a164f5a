"""Report periods: inclusive Africa/Lagos calendar days turned into half-open UTC bounds."""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from reconcile.reports.errors import PeriodError

LAGOS_NAME = "Africa/Lagos"
# Lagos has kept West Africa Time (UTC+1, no daylight saving) since 1919, so every ledger
# timestamp maps to its Lagos day by adding one hour to UTC. The SQL bucketing relies on this;
# `lagos_offset_is_fixed` lets a test check the assumption against the tz database in use.
LAGOS_UTC_OFFSET = dt.timedelta(hours=1)


@functools.cache
def lagos() -> ZoneInfo:
    """The Africa/Lagos zone (loaded on first use, not at import)."""
    return ZoneInfo(LAGOS_NAME)


# The days whose bounds exist as UTC instants: Lagos midnight of 0001-01-01 falls in year 0
# UTC, and the period ends at the midnight after `until`, which after 9999-12-31 is year 10000.
FIRST_DAY = dt.date(1, 1, 2)
LAST_DAY = dt.date(9999, 12, 30)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_day(value: str, *, option: str) -> dt.date:
    """A `YYYY-MM-DD` day from FIRST_DAY to LAST_DAY; PeriodError naming `option` otherwise."""
    text = value.strip()
    try:
        # fromisoformat alone also takes "2024-W01-1" and even "20240101xx".
        if not _DAY.fullmatch(text):
            raise ValueError(text)
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise PeriodError(f"{option} must be a day as YYYY-MM-DD, got {value!r}") from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise PeriodError(f"{option} must be a day from {FIRST_DAY} to {LAST_DAY}, got {value!r}")
    return day


@dataclass(frozen=True)
class Period:
    """Inclusive Lagos days; None on either side means unbounded (the whole ledger)."""

    since: dt.date | None = None
    until: dt.date | None = None

    def __post_init__(self) -> None:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise PeriodError(
                f"--since {self.since.isoformat()} is after --until {self.until.isoformat()}"
            )

    @property
    def start(self) -> dt.datetime | None:
        """First UTC instant inside the period (midnight in Lagos of `since`)."""
        return None if self.since is None else lagos_midnight_utc(self.since)

    @property
    def end(self) -> dt.datetime | None:
        """First UTC instant after the period (midnight in Lagos after `until`); exclusive."""
        if self.until is None:
            return None
        return lagos_midnight_utc(self.until + dt.timedelta(days=1))

    def as_dict(self) -> dict[str, str | None]:
        """`{"since", "until"}` as ISO days or None, as the JSON report shows the period."""
        return {
            "since": None if self.since is None else self.since.isoformat(),
            "until": None if self.until is None else self.until.isoformat(),
        }

    def describe(self) -> str:
        """A human phrase for the period, for titles."""
        if self.since is None and self.until is None:
            return "whole ledger"
        since = self.since.isoformat() if self.since else "the beginning"
        until = self.until.isoformat() if self.until else "today"
        return f"{since} to {until} (Africa/Lagos)"


def parse_period(
    since: str | None, until: str | None, *, names: tuple[str, str] = ("--since", "--until")
) -> Period:
    """The period of `--since`/`--until` (or the query string); empty strings mean unset.

    `names` are how the user spelt the two values, so errors quote what they typed.
    """
    first = parse_day(since, option=names[0]) if since else None
    last = parse_day(until, option=names[1]) if until else None
    if first is not None and last is not None and first > last:
        raise PeriodError(f"{names[0]} {first.isoformat()} is after {names[1]} {last.isoformat()}")
    return Period(since=first, until=last)


def lagos_midnight_utc(day: dt.date) -> dt.datetime:
    """Midnight at the start of `day` in Lagos, as an aware UTC datetime."""
    local = dt.datetime.combine(day, dt.time(0, 0), tzinfo=lagos())
    return local.astimezone(dt.UTC)


def lagos_day(instant: dt.datetime) -> dt.date:
    """The Lagos calendar day of an aware instant."""
    return instant.astimezone(lagos()).date()


def lagos_text(instant: dt.datetime | None, *, seconds: bool = True) -> str:
    """An instant as people read it on a page: Lagos wall-clock time marked with its zone,
    e.g. "2026-03-01 10:15:00 WAT" ("—" for none)."""
    if instant is None:
        return "—"
    shown = "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"
    return instant.astimezone(lagos()).strftime(shown) + " WAT"


def lagos_offset_is_fixed(first_year: int, last_year: int) -> bool:
    """True when Lagos is UTC+1 at every half-month from `first_year` to `last_year`."""
    for year in range(first_year, last_year + 1):
        for month in range(1, 13):
            for day in (1, 15):
                instant = dt.datetime(year, month, day, 12, tzinfo=dt.UTC)
                if instant.astimezone(lagos()).utcoffset() != LAGOS_UTC_OFFSET:
                    return False
    return True
