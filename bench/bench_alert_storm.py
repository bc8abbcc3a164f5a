"""Alert dispatch after a storm of findings (issues 25/26): time and peak RSS.

Builds a fresh ledger with N open `unmatched_statement_line` findings (one import, one
account), then runs `dispatch_alerts` once (no sink: logged only) in a child process and
prints its wall time, peak RSS (resource.getrusage) and what it sent.

    .venv/bin/python bench/bench_alert_storm.py --db sqlite --findings 200000
    .venv/bin/python bench/bench_alert_storm.py --db postgres --findings 200000

PYTHONPATH=<another checkout> measures that checkout's dispatcher on the same data.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

NOW = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _build(url: str, findings: int) -> None:
    from sqlalchemy import insert

    from ledger.db import create_db_engine
    from ledger.migrate import upgrade
    from ledger.models import Finding, StatementAccount, StatementImport, StatementLine

    upgrade(url)
    engine = create_db_engine(url)
    opened = NOW - dt.timedelta(minutes=5)
    with engine.begin() as connection:
        connection.execute(
            insert(StatementAccount.__table__),  # type: ignore[attr-defined]
            [{"id": 1, "name": "bank", "kind": "bank", "created_at": opened}],
        )
        connection.execute(
            insert(StatementImport.__table__),  # type: ignore[attr-defined]
            [
                {
                    "id": 1,
                    "account_id": 1,
                    "file_name": "bad.csv",
                    "format": "csv",
                    "sha256": "0" * 64,
                    "size": 1,
                    "read": 0,
                    "new": 0,
                    "already_known": 0,
                    "invalid": 0,
                    "matched": 0,
                    "suggested": 0,
                    "unmatched": 0,
                    "balance_breaks": "[]",
                    "reversals": "[]",
                    "locked_periods": "[]",
                    "imported_by": "bench",
                    "imported_at": opened,
                }
            ],
        )
        for start in range(1, findings + 1, 5000):
            ids = range(start, min(start + 5000, findings + 1))
            connection.execute(
                insert(StatementLine.__table__),  # type: ignore[attr-defined]
                [
                    {
                        "id": i,
                        "account_id": 1,
                        "identity": f"{i:064d}",
                        "date": dt.date(2026, 3, 1),
                        "amount": 100_00 + i,
                        "direction": "credit",
                        "reference": f"REF{i}",
                        "narration": f"TRANSFER FROM CUSTOMER {i}",
                        "import_id": 1,
                        "file_line": i + 1,
                        "position": i + 1,
                        "state": "unmatched",
                        "reversal_pending": False,
                        "event_sequence": 0,
                    }
                    for i in ids
                ],
            )
            connection.execute(
                insert(Finding.__table__),  # type: ignore[attr-defined]
                [
                    {
                        "id": i,
                        "subject": "statement_line",
                        "subject_id": i,
                        "kind": "unmatched_statement_line",
                        "detail": f"credit of {100_00 + i} kobo on 2026-03-01 matches nothing",
                        "opened_at": opened,
                        "updated_at": opened,
                    }
                    for i in ids
                ],
            )
    engine.dispose()


def _child(url: str) -> None:
    import resource
    import time

    import structlog

    from ledger.db import create_db_engine
    from reconcile import alerts
    from reconcile.alert_plan import AlertRules
    from reconcile.checks import Policy

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    engine = create_db_engine(url)
    policy = Policy(0, 0, 3, 10**9, alerting=AlertRules())
    started = time.perf_counter()
    sent, failed = alerts.dispatch_alerts(engine, None, now=NOW, policy=policy)
    seconds = time.perf_counter() - started
    again = alerts.dispatch_alerts(engine, None, now=NOW, policy=policy)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "module": alerts.__file__,
                "sent": sent,
                "failed": failed,
                "seconds": round(seconds, 1),
                "peak_rss_mb": round(peak),
                "second_dispatch_sent": again[0],
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--findings", type=int, default=20_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    from sqlalchemy import create_engine, text

    with tempfile.TemporaryDirectory() as directory:
        name = f"bench_alerts_{uuid.uuid4().hex[:8]}"
        if args.db == "sqlite":
            url = f"sqlite:///{Path(directory) / 'ledger.db'}"
        else:
            admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
            with admin.connect() as connection:
                connection.execute(text(f"CREATE DATABASE {name}"))
            url = PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
        try:
            _build(url, args.findings)
            subprocess.run(
                [sys.executable, __file__, "--child", url], check=True, env=os.environ.copy()
            )
        finally:
            if args.db == "postgres":
                with admin.connect() as connection:
                    connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


if __name__ == "__main__":
    main()
