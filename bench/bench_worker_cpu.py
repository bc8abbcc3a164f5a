"""The relay worker's own CPU per delivery, with no destination's cost in it.

A backlog of BACKLOG events (one endpoint, one event per subject) is drained in this process
by a Worker whose transport is the in-memory one (relay/transports/memory.py: it signs, then
answers after a loop turn), on SQLite and on PostgreSQL. What it prints — CPU microseconds per
delivery (all threads: the loop and the claims and records in worker threads) and the rate —
is what the worker adds to any broker's own publish; a bare broker loop pays none of it but
the signature. Run it pinned to one CPU, as bench_brokers.py runs the worker:

    taskset -c 0 .venv/bin/python bench/bench_worker_cpu.py     # BENCH_WORKER_BACKLOG=10000

With PYTHONPATH (and the working directory) at another checkout, it measures that code.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import structlog

sys.path.insert(0, os.getcwd())

from ledger.db import create_db_engine
from ledger.migrate import upgrade
from payrecon.wiring import keyed_alert
from relay.transports.memory import MemoryTransport
from relay.worker import Worker
from tests.support import relay as support

BACKLOG = int(os.environ.get("BENCH_WORKER_BACKLOG", "10000"))
CONCURRENCY = int(os.environ.get("BENCH_RELAY_CONCURRENCY", "16"))
PG_ADMIN = os.environ.get("PAYRECON_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _database(db: str, workdir: Path) -> str:
    if db == "sqlite":
        return f"sqlite:///{workdir}/worker-cpu.db"
    with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
        conn.execute("DROP DATABASE IF EXISTS payrecon_bench_worker_cpu")
        conn.execute("CREATE DATABASE payrecon_bench_worker_cpu")
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    return base + "/payrecon_bench_worker_cpu"


def bench(db: str, workdir: Path) -> tuple[float, float]:
    """Drain BACKLOG events through the memory transport; (deliveries/s, CPU µs/delivery)."""
    url = _database(db, workdir)
    upgrade(url)
    engine = create_db_engine(url)
    support.add_endpoint(engine, "http://10.0.0.7/hook")
    support.emit_backlog(engine, BACKLOG)
    engine.dispose()
    # As `relay run` builds it: the worker's own writes skip SQLite's per-commit fsync.
    worker_engine = create_db_engine(url, durable=False)
    # A loop turn per attempt, as a real destination's await gives.
    transport = MemoryTransport(support.box(), delay=1e-6)
    worker = Worker(
        worker_engine,
        support.box(),
        support.config(concurrency=CONCURRENCY, timeout=15.0),
        alert=keyed_alert(worker_engine, None),
        transport=transport,
    )

    async def drain() -> tuple[float, float]:
        stop = asyncio.Event()
        started, cpu = time.monotonic(), time.process_time()
        task = asyncio.create_task(worker.run(stop))
        while len(transport.sent) < BACKLOG:
            await asyncio.sleep(0.005)
        elapsed, used = time.monotonic() - started, time.process_time() - cpu
        stop.set()
        await task
        return BACKLOG / elapsed, used * 1e6 / BACKLOG

    try:
        return asyncio.run(drain())
    finally:
        worker_engine.dispose()


def main() -> None:
    """On SQLite and PostgreSQL: the rate and the worker's CPU per delivery."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    print(f"{BACKLOG} events, concurrency {CONCURRENCY}, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as workdir:
        for db in ("sqlite", "postgresql"):
            rate, cpu_us = bench(db, Path(workdir))
            print(
                f"{db}: {rate:,.0f} deliveries/s, worker CPU {cpu_us:.0f} µs per delivery; "
                f"load average {os.getloadavg()[0]:.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
