"""Console benchmark: server time of the busiest pages on a big ledger (SQLite and PostgreSQL).

Run: .venv/bin/python bench/bench_console.py [--transfers 1000000] [--findings 50000]
     [--backend sqlite|postgresql|both] [--requests 60] [--results FILE]

The ledger is bulk-built with Core executemany batches (transfers, findings with notes and
assignees, three provider checks for each transfer with a finding). Each page is then asked
for `--requests` times in-process (httpx.ASGITransport, no network): the transfers list
(first pages, filters, cursor pages), a search by either reference, a transfer's timeline
page and the findings queue (open, by kind, by assignee). Target: p95 < 100 ms each.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import logging
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import structlog
from sqlalchemy import insert, select

from ledger.db import create_db_engine, write_session
from ledger.migrate import upgrade
from ledger.models import Finding, FindingNote, ProviderCheck, Transfer
from payrecon.app import create_app
from payrecon.settings import load_settings
from tests.support.databases import _admin_execute, postgres_admin_url, postgres_available

BATCH = 50_000
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
DAYS = 60
TOKEN = "bench-console-token-0123456789"
KINDS = ("amount_mismatch", "fee_mismatch", "stale_pending", "status_conflict", "orphan_event")
TARGET_MS = 100.0


def _transfers(first: int, count: int, rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    for index in range(first, first + count):
        status = rng.choices(("successful", "failed", "pending"), (90, 7, 3))[0]
        amount = rng.randrange(10_000, 500_000_000)
        rows.append(
            {
                "reference": f"bench-{index:08d}",
                "provider_reference": f"TRF_{index:010d}",
                "origin": "initiated",
                "status": status,
                "confirmed": status != "pending",
                "amount": amount,
                "fee": 2688,
                "provider_amount": amount,
                "provider_fee": 2688,
                "check_attempts": 1,
                "not_found_count": 0,
                "created_at": START + dt.timedelta(seconds=rng.randrange(DAYS * 86_400)),
                "updated_at": START,
            }
        )
    return rows


def build(url: str, transfers: int, findings: int) -> tuple[float, list[int]]:
    """Fill the ledger; seconds taken and the transfer ids that have findings."""
    rng = random.Random(17)
    engine = create_db_engine(url)
    began = time.perf_counter()
    for first in range(0, transfers, BATCH):
        with write_session(engine) as session:
            session.execute(
                insert(Transfer.__table__),  # type: ignore[attr-defined]
                _transfers(first, min(BATCH, transfers - first), rng),
            )
    with_findings = rng.sample(range(1, transfers + 1), k=findings)
    rows, checks = [], []
    for n, transfer_id in enumerate(with_findings):
        acknowledged = n % 3 == 0
        rows.append(
            {
                "subject": "transfer",
                "subject_id": transfer_id,
                "kind": KINDS[n % len(KINDS)],
                "detail": "amount 100 kobo vs 90 kobo",
                "opened_at": START,
                "acknowledged_at": START if acknowledged else None,
                "ack_note": "bench" if acknowledged else None,
                "assignee": ("ada", "bola", None, None)[n % 4],
                "updated_at": START,
            }
        )
        for k in range(3):
            checks.append(
                {
                    "subject": "transfer",
                    "subject_id": transfer_id,
                    "checked_at": START + dt.timedelta(minutes=k),
                    "http_status": 200,
                    "result": "found",
                    "provider_status": "pending",
                    "amount": 100,
                    "fee": 10,
                }
            )
    with write_session(engine) as session:
        for first in range(0, len(rows), BATCH):
            session.execute(insert(Finding.__table__), rows[first : first + BATCH])  # type: ignore[attr-defined]
        for first in range(0, len(checks), BATCH):
            session.execute(insert(ProviderCheck.__table__), checks[first : first + BATCH])  # type: ignore[attr-defined]
    with write_session(engine) as session:
        ids = list(session.execute(select(Finding.id).limit(findings // 5)).scalars())  # type: ignore[call-overload]
        notes = [
            {"finding_id": i, "author": "ada", "body": "called the bank", "created_at": START}
            for i in ids
        ]
        session.execute(insert(FindingNote.__table__), notes)  # type: ignore[attr-defined]
    if engine.dialect.name == "postgresql":
        # Fresh statistics, as autovacuum would gather after a load; without them the planner
        # guesses a handful of findings and sorts every transfer that has one.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("ANALYZE")
    engine.dispose()
    return time.perf_counter() - began, with_findings


def _scenarios(
    transfers: int, with_findings: list[int], rng: random.Random
) -> dict[str, Callable[[], str]]:
    def reference() -> str:
        n = rng.randrange(transfers)
        return f"bench-{n:08d}" if rng.random() < 0.5 else f"TRF_{n:010d}"

    def listing() -> str:
        return rng.choice(
            [
                "/console/transfers",
                "/console/transfers?status=failed",
                "/console/transfers?status=pending&day=2026-01-15",
                "/console/transfers?finding=fee_mismatch",
                "/console/transfers?finding=any",
            ]
        )

    def timeline() -> str:
        n = rng.choice(with_findings) - 1
        return f"/console/transfers/bench-{n:08d}"

    def queue() -> str:
        return rng.choice(
            [
                "/console/findings",
                "/console/findings?state=open&kind=stale_pending",
                "/console/findings?state=&assignee=ada",
                "/console/findings?state=acknowledged",
            ]
        )

    return {
        "transfers list": listing,
        "search by reference": lambda: f"/console/transfers?q={reference()}",
        "timeline page": timeline,
        "findings queue": queue,
    }


async def measure(
    url: str, transfers: int, with_findings: list[int], requests: int
) -> dict[str, list[float]]:
    """Milliseconds per request of each scenario."""
    settings = load_settings(database_url=url, admin_token=TOKEN, log_level="WARNING")
    app = create_app(settings)
    rng = random.Random(5)
    times: dict[str, list[float]] = {}
    headers = {"authorization": f"Bearer {TOKEN}"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        for name, path_of in _scenarios(transfers, with_findings, rng).items():
            await client.get(path_of(), headers=headers)  # warm caches and templates
            samples = []
            for _ in range(requests):
                path = path_of()
                began = time.perf_counter()
                answer = await client.get(path, headers=headers)
                samples.append((time.perf_counter() - began) * 1000)
                assert answer.status_code == 200, (path, answer.status_code)
            times[name] = samples
    app.state.engine.dispose()
    return times


def p95(samples: list[float]) -> float:
    """The 95th percentile."""
    return statistics.quantiles(samples, n=20)[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transfers", type=int, default=1_000_000)
    parser.add_argument("--findings", type=int, default=50_000)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    logging.disable(logging.INFO)
    # One line per request would drown the table.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    lines = [
        f"console pages, {args.transfers:,} transfers, {args.findings:,} findings, "
        f"{args.requests} requests per page, in-process ASGI ({platform.python_version()})",
        "",
        "| backend | page | p50 ms | p95 ms | max ms | target p95 < 100 ms |",
        "|---|---|---:|---:|---:|---|",
    ]
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        for backend in backends:
            if backend == "sqlite":
                url = f"sqlite:///{folder}/console.db"
            else:
                if not postgres_available():
                    print("postgresql: no server on 127.0.0.1:5432, skipped")
                    continue
                # A name of this run's own: two runs at once never drop each other's ledger.
                database = f"bench_console_{os.getpid()}"
                _admin_execute(f"CREATE DATABASE {database}")
                url = postgres_admin_url().rsplit("/", 1)[0] + f"/{database}"
            upgrade(url)
            seconds, with_findings = build(url, args.transfers, args.findings)
            print(f"{backend}: ledger built in {seconds:.0f} s", flush=True)
            times = asyncio.run(measure(url, args.transfers, with_findings, args.requests))
            for name, samples in times.items():
                high = p95(samples)
                failed |= high >= TARGET_MS
                line = (
                    f"| {backend} | {name} | {statistics.median(samples):.1f} | {high:.1f} | "
                    f"{max(samples):.1f} | {'met' if high < TARGET_MS else 'MISSED'} |"
                )
                lines.append(line)
                print(line, flush=True)
            if backend == "postgresql":
                _admin_execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    text = "\n".join(lines)
    print(text)
    if args.results:
        args.results.write_text(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
