"""Bulk acknowledge by filter: 10,000 open findings acknowledged through the real API (a uvicorn
server on loopback), on SQLite and PostgreSQL, beside one bare UPDATE of the same rows.

Run: .venv/bin/python bench/bench_bulk_ack.py [--findings 10000] [--backend sqlite|postgresql|both]
     [--results FILE]

For each database: a fresh migrated ledger with `--findings` transfers, each with one open
`stale_pending` finding, and as many of another kind (left alone by the filter). The timed part
is what an operator's browser or script does: `GET /api/findings?kind=stale_pending&state=open`
for the count, then `POST /api/findings/ack {"filter": {"kind": "stale_pending"},
"expected_count": N, "note"}` — every finding acknowledged in batches, each with its note, its
`finding.acknowledged` relay event (one endpoint subscribed, so a delivery row too) and its audit
row. The baseline, in the same run on the same rows: one bare `UPDATE finding SET
acknowledged_at, ack_note` of those rows. Target (issue 25, point 2): under 10 s.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import structlog
from sqlalchemy import insert, select, text

from ledger.db import create_db_engine, write_session
from ledger.migrate import upgrade
from ledger.models import Finding, RelayEndpoint, Transfer
from payrecon.app import create_app
from payrecon.servers import running_server
from payrecon.settings import load_settings
from tests.support.databases import _admin_execute, postgres_admin_url, postgres_available

TOKEN = "bench-bulk-ack-token-0123456789"
NOW = dt.datetime(2026, 3, 2, 9, tzinfo=dt.UTC)
KIND, OTHER = "stale_pending", "orphan_event"
TARGET_S = 10.0


def _seed(url: str, findings: int) -> None:
    """`findings` transfers with a `KIND` finding and as many with an `OTHER` one."""
    engine = create_db_engine(url)
    transfers = [
        {
            "reference": f"BULK-{n:06d}",
            "origin": "expected",
            "status": "pending",
            "confirmed": False,
            "amount": 10_000 + n,
            "fee": 1075,
            "check_attempts": 0,
            "not_found_count": 0,
            "event_sequence": 0,
            "next_check_at": NOW,
            "created_at": NOW,
            "updated_at": NOW,
        }
        for n in range(2 * findings)
    ]
    with write_session(engine) as session:
        session.execute(insert(Transfer.__table__), transfers)  # type: ignore[attr-defined]
        ids = list(session.execute(select(Transfer.id).order_by(Transfer.id)).scalars())  # type: ignore[arg-type]
        rows = [
            {
                "subject": "transfer",
                "subject_id": transfer_id,
                "kind": KIND if n < findings else OTHER,
                "detail": "still pending after 2h",
                "opened_at": NOW,
                "updated_at": NOW,
            }
            for n, transfer_id in enumerate(ids)
        ]
        session.execute(insert(Finding.__table__), rows)  # type: ignore[attr-defined]
        session.add(
            RelayEndpoint(
                url="http://127.0.0.1:9/hook",
                secret_sealed="x",
                description="bench",
                event_types="finding.acknowledged",
            )
        )
    engine.dispose()


def _bulk_ack(base: str) -> tuple[float, dict[str, Any]]:
    headers = {"authorization": f"Bearer {TOKEN}"}
    began = time.perf_counter()
    with httpx.Client(base_url=base, headers=headers, timeout=600) as client:
        count = client.get("/api/findings", params={"kind": KIND, "state": "open", "limit": 1})
        total = count.json()["total"]
        answer = client.post(
            "/api/findings/ack",
            json={"filter": {"kind": KIND}, "expected_count": total, "note": "provider outage"},
        )
    elapsed = time.perf_counter() - began
    if answer.status_code != 200:
        raise SystemExit(f"bulk ack failed: {answer.status_code} {answer.text[:300]}")
    return elapsed, answer.json()


def _bare_update(url: str) -> float:
    engine = create_db_engine(url)
    statement = text(
        "UPDATE finding SET acknowledged_at = :at, ack_note = :note, updated_at = :at "
        "WHERE kind = :kind AND resolved_at IS NULL"
    )
    began = time.perf_counter()
    with write_session(engine) as session:
        session.execute(statement, {"at": NOW, "note": "bare", "kind": KIND})
    elapsed = time.perf_counter() - began
    engine.dispose()
    return elapsed


def run(url: str, findings: int) -> tuple[float, float, dict[str, Any]]:
    """(bulk ack seconds, bare UPDATE seconds, the API's answer) on a fresh ledger at `url`."""
    upgrade(url)
    _seed(url, findings)
    settings = load_settings(database_url=url, admin_token=TOKEN, log_level="WARNING")
    app = create_app(settings)
    with running_server(app) as base:
        elapsed, answer = _bulk_ack(base)
    app.state.engine.dispose()
    return elapsed, _bare_update(url), answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=10_000)
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    logging.disable(logging.INFO)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    lines = [
        f"# bench_bulk_ack: {args.findings:,} open findings acknowledged by filter through the "
        f"API ({platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus)",
        "",
        "| database | bulk ack s | findings/s | batches | bare UPDATE s | target < 10 s |",
        "|---|---:|---:|---:|---:|---|",
    ]
    failed = False
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    with tempfile.TemporaryDirectory() as folder:
        for backend in backends:
            if backend == "sqlite":
                url = f"sqlite:///{folder}/bulk.db"
            elif not postgres_available():
                print("postgresql: no server on 127.0.0.1:5432, skipped")
                continue
            else:
                name = f"payrecon_bench_bulk_{os.getpid()}"
                _admin_execute(f"DROP DATABASE IF EXISTS {name}")
                _admin_execute(f"CREATE DATABASE {name}")
                url = postgres_admin_url().rsplit("/", 1)[0] + f"/{name}"
            try:
                elapsed, bare, answer = run(url, args.findings)
            finally:
                if backend == "postgresql":
                    _admin_execute(f"DROP DATABASE IF EXISTS {name}")
            ok = elapsed < TARGET_S and answer["changed"] == args.findings
            failed |= not ok
            line = (
                f"| {backend} | {elapsed:.2f} | {args.findings / elapsed:,.0f} | "
                f"{answer['batches']} | {bare:.3f} | {'met' if ok else 'MISSED'} |"
            )
            print(line, flush=True)
            lines.append(line)
    lines.append("")
    lines.append(f"load average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.results:
        args.results.write_text("\n".join(lines) + "\n")
    print(lines[-1])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
