"""Benchmark the finance report on a large SQLite ledger: summary time, CSV rate and memory.

Run: .venv/bin/python bench/bench_reports.py [--transfers 1000000] [--results FILE]
     [--database FILE]  (keeps the ledger; a second run reuses it and skips the build)
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import random
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from sqlalchemy import insert, text

from ledger.db import create_db_engine, read_session, write_session
from ledger.migrate import upgrade
from ledger.models import Finding, Transfer
from reconcile.reports.csvout import write_csv
from reconcile.reports.period import parse_period
from reconcile.reports.rows import iter_transfer_rows
from reconcile.reports.summary import compute_report

BATCH = 50_000
START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
DAYS = 90


class NullSink:
    """Counts characters written and keeps none (measures the export, not a disk)."""

    def __init__(self) -> None:
        self.chars = 0

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


def _rows(first: int, count: int, rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    span = DAYS * 86_400
    for index in range(first, first + count):
        status = rng.choices(("successful", "failed", "pending"), (90, 7, 3))[0]
        amount = rng.randrange(10_000, 500_000_000)
        fee = 1075 if amount <= 500_000 else 2688 if amount <= 5_000_000 else 5375
        settled = status != "pending"
        confirmed = settled and rng.random() < 0.9
        rows.append(
            {
                "reference": f"bench-{index:08d}",
                "provider_reference": f"TRF_{index:010d}",
                "origin": "initiated",
                "status": status,
                "confirmed": confirmed,
                "amount": amount,
                "fee": fee,
                "webhook_amount": amount if settled else None,
                "webhook_fee": fee if settled else None,
                "provider_amount": amount if confirmed else None,
                "provider_fee": fee if confirmed else None,
                "check_attempts": 0,
                "not_found_count": 0,
                "created_at": START + dt.timedelta(seconds=rng.randrange(span)),
                "updated_at": START,
            }
        )
    return rows


def build_ledger(url: str, transfers: int) -> float:
    """Fill the ledger with Core executemany batches (and 1% findings); seconds taken."""
    rng = random.Random(2025)
    engine = create_db_engine(url)
    began = time.perf_counter()
    for first in range(0, transfers, BATCH):
        with write_session(engine) as session:
            session.execute(
                insert(Transfer.__table__),  # type: ignore[attr-defined]
                _rows(first, min(BATCH, transfers - first), rng),
            )
    findings = [
        {
            "subject": "transfer",
            "subject_id": transfer_id,
            "kind": rng.choice(("fee_mismatch", "amount_mismatch", "stale_pending")),
            "detail": "bench",
            "opened_at": START,
            "updated_at": START,
        }
        for transfer_id in rng.sample(range(1, transfers + 1), k=transfers // 100)
    ]
    with write_session(engine) as session:
        session.execute(insert(Finding.__table__), findings)  # type: ignore[attr-defined]
    engine.dispose()
    return time.perf_counter() - began


def main() -> int:
    """Build, measure, print (and optionally write) the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--transfers", type=int, default=1_000_000)
    parser.add_argument("--results", type=Path)
    parser.add_argument(
        "--database", type=Path, help="keep the ledger in this file; reuse it when it exists"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = args.database or Path(directory) / "bench.db"
        url = f"sqlite:///{path}"
        reuse = path.exists()
        upgrade(url)
        build_s = 0.0 if reuse else build_ledger(url, args.transfers)
        engine = create_db_engine(url)
        with read_session(engine) as session:
            # Baseline in the same run: one bare aggregate scan of the same table.
            began = time.perf_counter()
            session.execute(text("SELECT count(*), sum(amount), sum(fee) FROM transfer")).one()
            scan_s = time.perf_counter() - began
            began = time.perf_counter()
            report = compute_report(session, None, now=START + dt.timedelta(days=DAYS + 1))
            summary_s = time.perf_counter() - began
            week = parse_period("2025-02-01", "2025-02-07")
            began = time.perf_counter()
            compute_report(session, week, now=START + dt.timedelta(days=DAYS + 1))
            week_s = time.perf_counter() - began
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with read_session(engine) as session:
            began = time.perf_counter()
            rows = write_csv(iter_transfer_rows(session), NullSink())  # type: ignore[arg-type]
            csv_s = time.perf_counter() - began
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        with read_session(engine) as session:
            write_csv(iter_transfer_rows(session), NullSink())  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        engine.dispose()
    lines = [
        f"- machine: {platform.machine()}, Python {platform.python_version()}, "
        f"SQLite {__import__('sqlite3').sqlite_version}",
        f"- transfers: {args.transfers:,} over {DAYS} days; findings: {args.transfers // 100:,}",
        f"- build (Core executemany, {BATCH:,} per transaction): "
        + ("reused an existing file" if reuse else f"{build_s:.1f} s"),
        f"- summary, whole ledger: {summary_s:.2f} s "
        f"({len(report.days)} days, {len(report.open_findings):,} open findings listed, "
        f"{len(report.stale_pending):,} stale pending)",
        f"- baseline, one bare `SELECT count(*), sum(amount), sum(fee)` scan: {scan_s:.2f} s "
        f"(summary = {summary_s / scan_s:.1f}× the bare scan)",
        f"- summary, one week: {week_s:.2f} s",
        f"- CSV export: {rows:,} rows in {csv_s:.1f} s = {rows / csv_s:,.0f} rows/s",
        f"- CSV export peak traced Python memory (tracemalloc): {peak / 1_048_576:.1f} MiB",
        f"- process max RSS before / after the CSV export: {rss_before / 1024:.0f} / "
        f"{rss_after / 1024:.0f} MiB",
    ]
    print("\n".join(lines))
    if args.results:
        args.results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
