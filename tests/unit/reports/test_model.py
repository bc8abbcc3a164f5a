"""The pure report arithmetic: fees, wallet debit, JSON shape, quiet days."""

from __future__ import annotations

import datetime as dt

from reconcile.reports.model import DayLine, Report, StatusTotals, fill_days
from reconcile.reports.period import Period
from tests.unit.reports.samples import sample_report


def test_wallet_debit_is_successful_amount_and_fee_plus_fees_on_failed() -> None:
    """Pending quotes never reach fees.total or the wallet debit."""
    report = sample_report()
    assert report.fees_total == 5_375 + 2_500
    assert report.wallet_debit == 123_456_789 + 5_375 + 2_500


def test_json_shape_has_the_contract_keys_in_kobo() -> None:
    """The PRODUCT.md keys are present with integer kobo values."""
    data = sample_report().as_dict()
    assert set(data) >= {
        "period",
        "transfers",
        "fees",
        "wallet_debit",
        "findings",
        "open_findings",
        "stale_pending",
        "days",
    }
    assert data["period"] == {"since": "2025-03-01", "until": "2025-03-02"}
    assert list(data["transfers"]["by_status"]) == ["successful", "failed", "pending", "reversed"]
    assert data["transfers"]["by_status"]["failed"] == {
        "count": 1,
        "amount": 50_000,
        "fee": 2_500,
        "unconfirmed": 0,
    }
    assert data["fees"]["on_failed"] == 2_500 and data["fees"]["quoted_on_pending"] == 1_000
    assert data["findings"]["fee_mismatch"] == 1 and data["findings"]["unverifiable"] == 0
    assert data["open_findings"][1]["acknowledged"] is True
    assert data["open_findings"][1]["acknowledged_at"] == "2025-03-02T09:00:00Z"
    assert data["days"][0] == {
        "date": "2025-03-01",
        "count": 3,
        "amount": 100_000_000,
        "fee": 3_000,
        "failed": 1,
    }


def test_missing_statuses_count_as_zero() -> None:
    """A report with only pending transfers still has every status at zero."""
    report = Report(Period(), {"pending": StatusTotals(1, 10, 5)}, {}, {}, {})
    assert report.as_dict()["transfers"]["by_status"]["successful"]["count"] == 0
    assert report.fees_total == 0 and report.wallet_debit == 0


def test_fill_days_adds_quiet_days_between_busy_ones() -> None:
    """Gaps become zero lines; order is by date; nothing is invented outside the data."""
    lines = [DayLine(dt.date(2025, 3, 4), 1), DayLine(dt.date(2025, 3, 1), 2)]
    filled = fill_days(lines)
    assert [d.date.day for d in filled] == [1, 2, 3, 4]
    assert [d.count for d in filled] == [2, 0, 0, 1]
    assert fill_days([]) == []
