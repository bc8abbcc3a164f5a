"""The summary's figures against sums computed independently from the transfers created."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Engine

from ledger.db import read_session
from reconcile.reports.period import Period, parse_period
from reconcile.reports.summary import build_summary
from tests.integration.reports.ledgers import (
    UTC,
    Spec,
    expected_figures,
    insert_ledger,
    random_ledger,
)

START = dt.datetime(2025, 3, 1, 0, 0, tzinfo=UTC)
NOW = dt.datetime(2025, 4, 1, tzinfo=UTC)


def _summary(engine: Engine, period: Period | None = None, **kwargs: object) -> dict:
    with read_session(engine) as session:
        return build_summary(session, period, now=kwargs.get("now", NOW))  # type: ignore[arg-type]


def test_every_figure_matches_sums_computed_from_the_transfers(engine: Engine) -> None:
    """Totals by status, fees, wallet debit, days and finding counts equal independent sums."""
    specs = random_ledger(seed=7, count=160, start=START)
    insert_ledger(engine, specs)
    want = expected_figures(specs)
    got = _summary(engine)
    assert got["transfers"]["total"] == want["total"]
    assert got["transfers"]["by_status"] == want["by_status"]
    assert got["fees"]["total"] == want["fees_total"]
    assert got["fees"]["on_failed"] == want["fees_on_failed"]
    assert got["fees"]["quoted_on_pending"] == want["by_status"]["pending"]["fee"]
    assert got["wallet_debit"] == want["wallet_debit"]
    assert {k: v for k, v in got["findings"].items() if v} == dict(want["open_kinds"])
    days = {dt.date.fromisoformat(d.pop("date")): d for d in got["days"] if d["count"]}
    assert days == want["days"]
    assert sum(got["figures_from"].values()) == want["total"]


def test_a_period_counts_only_its_own_transfers(engine: Engine) -> None:
    """A two-day period equals the independent sums over the transfers of those Lagos days."""
    specs = random_ledger(seed=11, count=120, start=START, days=6)
    insert_ledger(engine, specs)
    period = parse_period("2025-03-02", "2025-03-03")
    inside = [s for s in specs if dt.date(2025, 3, 2) <= s.lagos_date <= dt.date(2025, 3, 3)]
    want = expected_figures(inside)
    got = _summary(engine, period)
    assert got["period"] == {"since": "2025-03-02", "until": "2025-03-03"}
    assert got["transfers"]["by_status"] == want["by_status"]
    assert got["wallet_debit"] == want["wallet_debit"]
    assert [d["date"] for d in got["days"]] == ["2025-03-02", "2025-03-03"]


def test_lagos_day_boundaries_decide_the_period_and_the_day(engine: Engine) -> None:
    """23:00 UTC starts the next Lagos day: 23:30 UTC on the 1st belongs to the 2nd."""
    at = [
        ("before", dt.datetime(2025, 3, 1, 22, 59, 59, 999_999, tzinfo=UTC)),  # Lagos 1st 23:59
        ("first", dt.datetime(2025, 3, 1, 23, 0, tzinfo=UTC)),  # Lagos 2nd 00:00
        ("late", dt.datetime(2025, 3, 1, 23, 30, tzinfo=UTC)),  # Lagos 2nd 00:30
        ("last", dt.datetime(2025, 3, 2, 22, 59, 59, tzinfo=UTC)),  # Lagos 2nd 23:59:59
        ("after", dt.datetime(2025, 3, 2, 23, 0, tzinfo=UTC)),  # Lagos 3rd 00:00
    ]
    specs = [
        Spec(name, "successful", when, 1000 * (i + 1), 10, confirmed=True)
        for i, (name, when) in enumerate(at)
    ]
    insert_ledger(engine, specs)
    got = _summary(engine, parse_period("2025-03-02", "2025-03-02"))
    assert got["transfers"]["total"] == 3
    assert got["transfers"]["by_status"]["successful"]["amount"] == 2000 + 3000 + 4000
    whole = _summary(engine)
    assert [(d["date"], d["count"], d["amount"]) for d in whole["days"]] == [
        ("2025-03-01", 1, 1000),
        ("2025-03-02", 3, 9000),
        ("2025-03-03", 1, 5000),
    ]


def test_pending_quotes_are_not_fees_charged_but_failed_fees_are(engine: Engine) -> None:
    """A pending quote stays out of fees.total; a fee charged on a failure counts in the debit."""
    specs = [
        Spec(
            "ok",
            "successful",
            START,
            100_000,
            1000,
            provider_amount=100_000,
            provider_fee=1075,
            confirmed=True,
        ),
        Spec("failed-fee", "failed", START, 50_000, 1000, webhook_amount=50_000, webhook_fee=2500),
        Spec("waiting", "pending", START, 70_000, 5000),
    ]
    insert_ledger(engine, specs)
    got = _summary(engine)
    assert got["fees"] == {
        "total": 1075 + 2500,
        "on_successful": 1075,
        "on_failed": 2500,
        "on_reversed": 0,
        "quoted_on_pending": 5000,
    }
    assert got["wallet_debit"] == 100_000 + 1075 + 2500
    assert got["transfers"]["unconfirmed"] == 1
    assert got["figures_from"] == {"provider": 1, "webhook": 1, "expected": 1}


def test_open_findings_keep_acknowledged_ones_marked_and_drop_resolved(engine: Engine) -> None:
    """Open and acknowledged findings are listed with a hint; resolved ones are not."""
    specs = [
        Spec(
            "a",
            "successful",
            START,
            1000,
            10,
            provider_amount=1000,
            provider_fee=15,
            findings=[("fee_mismatch", "open")],
        ),
        Spec("b", "failed", START, 2000, 10, findings=[("amount_mismatch", "acknowledged")]),
        Spec("c", "failed", START, 3000, 10, findings=[("status_conflict", "resolved")]),
    ]
    insert_ledger(engine, specs)
    got = _summary(engine)
    listed = {f["reference"]: f for f in got["open_findings"]}
    assert set(listed) == {"a", "b"}
    assert listed["a"]["acknowledged"] is False and listed["a"]["acknowledged_at"] is None
    assert listed["b"]["acknowledged"] is True
    assert listed["b"]["ack_note"] == "checked with provider"
    assert listed["a"]["provider_reference"] == "prov-a"
    assert "claim the difference" in listed["a"]["what_to_do"]
    assert got["findings"]["fee_mismatch"] == 1
    assert got["findings"]["amount_mismatch"] == 1
    assert got["findings"]["status_conflict"] == 0
    assert got["findings_acknowledged"]["amount_mismatch"] == 1
    # Unacknowledged findings come first: they still need someone.
    assert [f["reference"] for f in got["open_findings"]] == ["a", "b"]


def test_stale_pending_lists_pending_transfers_older_than_the_limit(engine: Engine) -> None:
    """Only pending transfers created before now - stale_after are stale."""
    now = dt.datetime(2025, 3, 1, 12, tzinfo=UTC)
    specs = [
        Spec(
            "old",
            "pending",
            now - dt.timedelta(hours=2),
            1000,
            10,
            findings=[("stale_pending", "acknowledged")],
        ),
        Spec("fresh", "pending", now - dt.timedelta(minutes=5), 1000, 10),
        Spec("done", "successful", now - dt.timedelta(hours=3), 1000, 10),
    ]
    insert_ledger(engine, specs)
    with read_session(engine) as session:
        got = build_summary(session, None, stale_after=1800, now=now)
    assert [s["reference"] for s in got["stale_pending"]] == ["old"]
    assert got["stale_pending"][0]["acknowledged"] is True
    assert got["stale_pending"][0]["finding_id"] is not None
    assert got["stale_after_seconds"] == 1800


def test_an_empty_ledger_reports_zeros_with_the_full_shape(engine: Engine) -> None:
    """No transfers: every key present, every figure zero, no days."""
    got = _summary(engine)
    assert got["transfers"]["total"] == 0
    assert got["transfers"]["by_status"]["failed"] == {
        "count": 0,
        "amount": 0,
        "fee": 0,
        "unconfirmed": 0,
    }
    assert got["fees"]["total"] == 0 and got["wallet_debit"] == 0
    assert got["days"] == [] and got["open_findings"] == [] and got["stale_pending"] == []
    assert set(got["findings"]) >= {"amount_mismatch", "fee_mismatch", "stale_pending"}


def test_quiet_days_inside_the_data_are_filled_with_zeros(engine: Engine) -> None:
    """A day without transfers between two busy days appears with zero figures."""
    specs = [
        Spec("d1", "successful", dt.datetime(2025, 3, 1, 10, tzinfo=UTC), 500, 5),
        Spec("d3", "failed", dt.datetime(2025, 3, 3, 10, tzinfo=UTC), 700, 7),
    ]
    insert_ledger(engine, specs)
    got = _summary(engine)
    assert got["days"] == [
        {"date": "2025-03-01", "count": 1, "amount": 500, "fee": 5, "failed": 0},
        {"date": "2025-03-02", "count": 0, "amount": 0, "fee": 0, "failed": 0},
        {"date": "2025-03-03", "count": 1, "amount": 0, "fee": 7, "failed": 1},
    ]
