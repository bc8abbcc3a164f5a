"""A hand-built report for the pure rendering tests."""

from __future__ import annotations

import datetime as dt

from reconcile.advice import what_to_do
from reconcile.reports.model import DayLine, OpenFinding, Report, StalePending, StatusTotals
from reconcile.reports.period import Period

UTC = dt.UTC


def sample_report() -> Report:
    """Two days, one of each status, an open and an acknowledged finding, one stale transfer."""
    return Report(
        period=Period(dt.date(2025, 3, 1), dt.date(2025, 3, 2)),
        by_status={
            "successful": StatusTotals(count=3, amount=123_456_789, fee=5_375, unconfirmed=1),
            "failed": StatusTotals(count=1, amount=50_000, fee=2_500),
            "pending": StatusTotals(count=1, amount=70_000, fee=1_000),
        },
        figures_from={"provider": 2, "webhook": 2, "expected": 1},
        findings_open={"fee_mismatch": 1, "orphan_event": 1},
        findings_acknowledged={"orphan_event": 1},
        open_findings=[
            OpenFinding(
                1,
                "fee_mismatch",
                "quoted <b>10</b>, charged 53.75",
                "ref-<1>",
                "p-1",
                "successful",
                100_000,
                dt.datetime(2025, 3, 1, 9, tzinfo=UTC),
                None,
                None,
                what_to_do("fee_mismatch"),
            ),
            OpenFinding(
                2,
                "orphan_event",
                "unknown [bold]ref[/bold]",
                "ref-2",
                None,
                "successful",
                7_000,
                dt.datetime(2025, 3, 1, 9, tzinfo=UTC),
                dt.datetime(2025, 3, 2, 9, tzinfo=UTC),
                "ours, from the old system",
                what_to_do("orphan_event"),
            ),
        ],
        stale_pending=[
            StalePending(
                "stuck-1",
                None,
                70_000,
                1_000,
                dt.datetime(2025, 3, 2, 8, tzinfo=UTC),
                None,
                False,
                what_to_do("stale_pending"),
            ),
        ],
        days=[
            DayLine(dt.date(2025, 3, 1), 3, 100_000_000, 3_000, 1),
            DayLine(dt.date(2025, 3, 2), 2, 23_456_789, 4_875, 0),
        ],
    )
