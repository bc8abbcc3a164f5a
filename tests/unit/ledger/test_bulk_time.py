"""ledger.bulk.sqlite_time: the text SQLAlchemy's SQLite dialect stores for a UTCDateTime."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite

from ledger.bulk import sqlite_time
from ledger.types import UTCDateTime

_DIALECT = sqlite.dialect()  # type: ignore[no-untyped-call]
_PROCESS = UTCDateTime().dialect_impl(_DIALECT).bind_processor(_DIALECT)

_ZONES = st.sampled_from(
    [dt.UTC, dt.timezone(dt.timedelta(hours=1)), dt.timezone(dt.timedelta(hours=-9, minutes=-30))]
)


@given(
    st.datetimes(
        min_value=dt.datetime(1900, 1, 2), max_value=dt.datetime(9998, 12, 30), timezones=_ZONES
    )
)
def test_the_fast_text_is_the_dialects_own(value: dt.datetime) -> None:
    """For any aware datetime, the text is exactly what the dialect's processor writes."""
    assert _PROCESS is not None
    assert sqlite_time(value) == _PROCESS(value)


def test_whole_seconds_still_carry_six_digits_of_microseconds() -> None:
    """A value without microseconds keeps the fixed width that sorts and compares as text."""
    value = dt.datetime(2026, 11, 26, 23, 0, tzinfo=dt.UTC)
    assert sqlite_time(value) == "2026-11-26 23:00:00.000000"


def test_a_naive_datetime_is_refused_as_the_type_refuses_it() -> None:
    """A datetime without a zone is an error, never stored as if it were UTC."""
    with pytest.raises(ValueError, match="naive"):
        sqlite_time(dt.datetime(2026, 11, 26))
