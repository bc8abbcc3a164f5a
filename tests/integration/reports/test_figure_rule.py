"""One figure rule: the console overview's today equals the report's today, on both databases."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Engine, insert

from ledger.db import read_session, write_session
from ledger.models import Collection
from ledger.overview import overview
from reconcile.reports.period import Period, lagos_day, lagos_midnight_utc
from reconcile.reports.summary import compute_report
from tests.integration.reports.ledgers import UTC, Spec, insert_ledger

NOW = dt.datetime(2025, 6, 3, 15, 0, tzinfo=UTC)
TODAY = lagos_day(NOW)
START = lagos_midnight_utc(TODAY)


def _collection(number: int, status: str, **values: object) -> dict[str, object]:
    return {
        "reference": f"FR-COL-{number}",
        "origin": "expected",
        "status": status,
        "confirmed": status != "pending",
        "amount": 500_000,
        "fee": 5_000,
        "final_check_done": False,
        "check_attempts": 0,
        "not_found_count": 0,
        "event_sequence": 0,
        "created_at": START + dt.timedelta(hours=2, minutes=number),
        "updated_at": START,
        **values,
    }


def _ledger(engine: Engine) -> None:
    at = START + dt.timedelta(hours=1)
    yesterday = START - dt.timedelta(minutes=5)
    insert_ledger(
        engine,
        [
            # Webhook-only transfers (orphans): no expected amount or quote at all.
            Spec("FR-ORPHAN-1", "successful", at, None, None, 700_000, 2_500),
            Spec("FR-ORPHAN-2", "failed", at, None, None, 300_000, 1_000),
            Spec("FR-OK", "successful", at, 100_000, 1_000, 100_000, 1_000, 100_500, 1_075, True),
            Spec("FR-FAILED", "failed", at, 200_000, 1_000, provider_fee=500, confirmed=True),
            Spec("FR-PENDING", "pending", at, 50_000, 2_500),
            Spec("FR-YESTERDAY", "successful", yesterday, 9_999_999, 1, confirmed=True),
        ],
    )
    rows = [
        _collection(1, "successful", amount_paid=480_000, provider_fee=4_800),
        _collection(2, "failed"),  # nothing paid, no fee charged
        _collection(3, "failed", provider_fee=100),  # a fee charged although it failed
        _collection(4, "pending"),
    ]
    with write_session(engine) as session:
        session.execute(insert(Collection), rows)


def test_the_overviews_today_is_the_reports_today(engine: Engine) -> None:
    """Orphans, failures and collections count the same in the overview and the report."""
    _ledger(engine)
    with read_session(engine) as session:
        figures = overview(session, day_start=START, now=NOW, stale_after=10**9)
        report = compute_report(session, Period(TODAY, TODAY), now=NOW)
    for status in ("successful", "failed", "pending"):
        mine, theirs = figures.today.get(status), report.by_status[status]
        assert mine is not None
        assert (mine.count, mine.amount, mine.fee) == (theirs.count, theirs.amount, theirs.fee)
        ours, reported = figures.collections_today.get(status), report.collections.status(status)
        assert ours is not None
        assert (ours.count, ours.amount, ours.fee) == (
            reported.count,
            reported.amount,
            reported.fee,
        )
    successful = figures.today["successful"]
    assert (successful.count, successful.amount, successful.fee) == (2, 800_500, 3_575)
    failed = figures.today["failed"]
    assert (failed.count, failed.amount, failed.fee) == (2, 500_000, 1_500)


def test_a_failed_collection_charged_nothing_shows_no_fee(engine: Engine) -> None:
    """Failed collections count only fees actually charged, never their quotes."""
    _ledger(engine)
    with read_session(engine) as session:
        figures = overview(session, day_start=START, now=NOW, stale_after=10**9)
    failed = figures.collections_today["failed"]
    assert (failed.count, failed.fee) == (2, 100)
    assert figures.collections_today["pending"].fee == 5_000
