"""One scrape of `/metrics` on a ledger of ~1,000,000 transfers: today's relay figures alone
(the baseline) against the whole scrape with the ledger's gauges (telemetry.gauges), in one run.

The target (issue 28): a scrape under 100 ms. Transfers are made by doubling 1,000 rows ten
times in SQL (1,024,000), 1 % of them pending and due, with 1,000 open findings; the scrape is
timed 20 times after two warm-ups and the median kept. Figures go to bench/results/scrape.md.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from prometheus_client import CollectorRegistry, generate_latest
from sqlalchemy import Engine, insert, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ledger.db import create_db_engine, write_session  # noqa: E402
from ledger.migrate import upgrade  # noqa: E402
from ledger.models import Finding, Transfer  # noqa: E402
from receiver.metrics import create_metrics  # noqa: E402
from relay.metrics import register_relay_metrics  # noqa: E402
from telemetry.gauges import register_ledger_gauges  # noqa: E402

SEED = 1000
DOUBLINGS = 10
SCRAPES = 20
LIMIT_MS = 100.0
PG_ADMIN = os.environ.get("PAYRECON_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
_COLUMNS = (
    "origin, status, confirmed, check_attempts, not_found_count, event_sequence, "
    "created_at, updated_at, next_check_at"
)


def fill(engine: Engine) -> int:
    """~1M transfers (1 % pending and due) and 1,000 open findings; the transfer count."""
    now = dt.datetime.now(dt.UTC)
    rows = [
        {
            "reference": f"B-{i}",
            "origin": "api",
            "status": "pending" if i % 100 == 0 else "successful",
            "confirmed": i % 100 != 0,
            "created_at": now - dt.timedelta(seconds=i),
            "updated_at": now,
            "next_check_at": now if i % 100 == 0 else None,
        }
        for i in range(SEED)
    ]
    with write_session(engine) as session:
        session.execute(insert(Transfer), rows)
        for k in range(DOUBLINGS):
            session.execute(
                text(
                    f"INSERT INTO transfer (reference, {_COLUMNS}) "
                    f"SELECT reference || '-{k}', {_COLUMNS} FROM transfer"
                )
            )
        ids = session.execute(text("SELECT id FROM transfer ORDER BY id LIMIT 1000")).scalars()
        session.execute(
            insert(Finding),
            [
                {
                    "transfer_id": i,
                    "kind": "amount_mismatch",
                    "detail": "bench",
                    "opened_at": now,
                    "updated_at": now,
                }
                for i in ids
            ],
        )
        count = session.execute(text("SELECT count(*) FROM transfer")).scalar_one()
    with engine.connect() as conn:
        conn.execute(text("ANALYZE"))
        conn.commit()
    return int(count)


def median_ms(registry: CollectorRegistry) -> float:
    """The median time of one full exposition of `registry`."""
    for _ in range(2):
        generate_latest(registry)
    times = []
    for _ in range(SCRAPES):
        started = time.perf_counter()
        generate_latest(registry)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(name: str, url: str) -> str:
    """Fill the ledger at `url`, then time the baseline and the whole scrape."""
    upgrade(url)
    engine = create_db_engine(url)
    try:
        started = time.perf_counter()
        count = fill(engine)
        filled = time.perf_counter() - started
        baseline = create_metrics().registry
        register_relay_metrics(baseline, engine)
        whole = create_metrics().registry
        register_relay_metrics(whole, engine)
        register_ledger_gauges(whole, engine)
        before, after = median_ms(baseline), median_ms(whole)
    finally:
        engine.dispose()
    met = "yes" if after < LIMIT_MS else "no"
    return (
        f"| {name} | {count:,} | {before:.2f} | {after:.2f} | {after / before:.1f}× | "
        f"< {LIMIT_MS:.0f} ms | {met} | {filled:.0f} s |"
    )


def _pg() -> str | None:
    try:
        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute("DROP DATABASE IF EXISTS payrecon_bench_scrape")
            conn.execute("CREATE DATABASE payrecon_bench_scrape")
    except psycopg.Error as exc:
        print(f"PostgreSQL unavailable, skipping: {exc}")
        return None
    return (
        PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
        + "/payrecon_bench_scrape"
    )


def main() -> None:
    """Measure on SQLite and (when it answers) PostgreSQL, and record the table."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    lines = [
        f"Command: `python bench/bench_scrape.py`, {when}, {os.cpu_count()} cores, "
        f"load average {load:.1f}; median of {SCRAPES} scrapes.",
        "",
        "| ledger | transfers | baseline (relay figures) ms | whole scrape ms | ratio | target "
        "| met | fill |",
        "|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="payrecon-scrape-") as workdir:
        lines.append(measure("SQLite", f"sqlite:///{workdir}/scrape.db"))
    pg = _pg()
    if pg:
        lines.append(measure("PostgreSQL", pg))
    text_out = "\n".join(lines) + "\n"
    print(text_out)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "scrape.md").write_text(text_out)


if __name__ == "__main__":
    main()
