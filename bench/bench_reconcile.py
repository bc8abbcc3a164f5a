"""Reconciler benchmarks: lookup throughput against the sandbox, and pass cost on a big ledger.

Run: .venv/bin/python bench/bench_reconcile.py [--transfers 10000] [--settled 1000000]

1. N pending transfers in a SQLite ledger, each known to the sandbox, which answers
   every lookup after `lookup_latency=0.05` s; rate cap off. One pass looks all of
   them up; lookups/s is printed beside the ceiling concurrency / latency.
2. A SQLite ledger with M settled transfers (next_check_at NULL) and 100 due:
   the time of one pass (lookups answered in-process, so this is the ledger's cost).
3. Re-verification (PRODUCT.md: Reversals): the same M settled transfers, every one waiting
   for its next age (next_check_at in the future, as PAYRECON_REVERIFY_AFTER leaves them), and
   100 confirmed successes due for re-verification; printed beside (2), measured in the same
   run: the due query must stay the one range of ix_transfer_due.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from sqlalchemy import Engine, insert

from ledger.db import create_db_engine
from ledger.migrate import upgrade
from ledger.models import Transfer
from ledger.types import utcnow
from payrecon.settings import load_settings
from provider.client import AsyncProviderClient
from provider.models import Transaction
from reconcile.poller import run_pass
from tests.support.servers import free_port, wait_for_port

LATENCY = 0.05


def _rows(
    count: int,
    *,
    start: int,
    due: dt.datetime | None,
    now: dt.datetime,
    provider_refs: list[str] | None = None,
) -> list[dict[str, Any]]:
    rows = []
    for i in range(count):
        rows.append(
            {
                "reference": f"B{start + i}",
                "provider_reference": provider_refs[i] if provider_refs else f"TRF_B{start + i}",
                "origin": "expected",
                "status": "pending" if due else "successful",
                "confirmed": due is None,
                "amount": 100_000,
                "fee": 1_000,
                "provider_amount": None if due else 100_000,
                "provider_fee": None if due else 1_000,
                "provider_status": None if due else "successful",
                "check_attempts": 0,
                "not_found_count": 0,
                "next_check_at": due,
                "created_at": now,
                "updated_at": now,
            }
        )
    return rows


def _bulk(engine: Engine, rows: list[dict[str, Any]]) -> None:
    table = Transfer.__table__  # type: ignore[attr-defined]
    with engine.begin() as connection:
        for i in range(0, len(rows), 50_000):
            connection.execute(insert(table), rows[i : i + 50_000])


@contextlib.contextmanager
def _sandbox_process() -> Iterator[tuple[str, str]]:
    # Its own process: in a thread it would share our GIL and measure itself, not us.
    port, secret = free_port(), "sk_test_benchbenchbench"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sandbox",
            "--port",
            str(port),
            "--complete-after",
            "never",
            "--webhook-url",
            "http://127.0.0.1:9/x",
            "--webhook-retry",
            "",
            "--secret-key",
            secret,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}", secret
    finally:
        process.terminate()
        process.wait(timeout=30)


def throughput(count: int, concurrency: int, workdir: Path) -> dict[str, float]:
    """One pass over `count` pending transfers at `concurrency`; lookups per second."""
    url = f"sqlite:///{workdir}/tp-{count}-{concurrency}.db"
    upgrade(url)
    engine = create_db_engine(url)
    with _sandbox_process() as (base, secret), httpx.Client(base_url=base) as http:
        account = next(
            a
            for a in http.get("/_sandbox/accounts").json()["accounts"]
            if a["behaviour"] == "succeeds"
        )
        headers = {"Authorization": f"Bearer {secret}"}
        refs = []
        for i in range(count):
            answer = http.post(
                "/v1/transfer/initiate",
                headers=headers,
                json={
                    "amount": 100_000,
                    "bank_code": account["bank_code"],
                    "account_number": account["account_number"],
                    "reference": f"B{i}",
                },
            )
            refs.append(answer.json()["data"]["reference"])
        now = utcnow()
        _bulk(engine, _rows(count, start=0, due=now, now=now, provider_refs=refs))
        http.post("/_sandbox/faults", json={"lookup_latency": LATENCY}).raise_for_status()
        settings = load_settings(
            database_url=url,
            provider_max_rps=0,
            provider_concurrency=concurrency,
            stale_after=10**6,
        )

        async def one_pass() -> Any:
            async with AsyncProviderClient(base, secret, max_retries=0) as client:
                return await run_pass(engine, client, settings, now=now)

        started = time.perf_counter()
        summary = asyncio.run(one_pass())
        elapsed = time.perf_counter() - started
    engine.dispose()
    assert summary.checked == count, summary
    return {
        "count": count,
        "concurrency": concurrency,
        "seconds": elapsed,
        "rate": count / elapsed,
        "ceiling": concurrency / LATENCY,
    }


class InstantLookup:
    """Answers every lookup at once: the pass then costs only the ledger's work."""

    async def get_transaction(self, reference: str) -> Transaction:
        return Transaction(
            reference=reference,
            merchant_reference=reference.removeprefix("TRF_"),
            type="transfer",
            amount=100_000,
            fee=1_000,
            status="successful",
        )  # type: ignore[arg-type]


def big_ledger(settled: int, workdir: Path) -> dict[str, float]:
    """A pass with `settled` settled transfers and 100 due, on SQLite."""
    url = f"sqlite:///{workdir}/big.db"
    upgrade(url)
    engine = create_db_engine(url)
    now = utcnow()
    started = time.perf_counter()
    for offset in range(0, settled, 200_000):
        _bulk(engine, _rows(min(200_000, settled - offset), start=offset, due=None, now=now))
    _bulk(engine, _rows(100, start=settled, due=now, now=now))
    seeded = time.perf_counter() - started
    times = _timed_passes(
        engine,
        url,
        now,
        # make the same 100 due again
        "UPDATE transfer SET next_check_at = ?, last_checked_at = NULL, confirmed = 0, "
        "status = 'pending' WHERE id > ?",
        settled,
    )
    engine.dispose()
    return _figures(settled, seeded, times)


def _figures(settled: int, seeded: float, times: list[float]) -> dict[str, float]:
    return {
        "settled": settled,
        "seed_seconds": seeded,
        "pass_seconds": min(times),
        "pass_seconds_max": max(times),
    }


def _timed_passes(
    engine: Engine, url: str, now: dt.datetime, reset: str, settled: int, *, reverified: int = 0
) -> list[float]:
    """Three passes over the 100 rows after `settled`, each made due again by `reset` (which
    takes the due time and `settled`); the seconds of each."""
    settings = load_settings(database_url=url, provider_max_rps=0, stale_after=10**6)
    times = []
    for attempt in range(3):
        with engine.begin() as connection:
            due = (now + dt.timedelta(seconds=attempt)).replace(tzinfo=None).isoformat(" ")
            connection.exec_driver_sql(reset, (due, settled))
        t0 = time.perf_counter()
        summary = asyncio.run(
            run_pass(engine, InstantLookup(), settings, now=now + dt.timedelta(seconds=attempt + 1))
        )
        times.append(time.perf_counter() - t0)
        assert summary.checked == 100 and summary.reverified == reverified, summary
    return times


def reverify_ledger(settled: int, workdir: Path) -> dict[str, float]:
    """A pass re-verifying 100 successes among `settled` ones all scheduled for a later age."""
    url = f"sqlite:///{workdir}/reverify.db"
    upgrade(url)
    engine = create_db_engine(url)
    now = utcnow()
    later = now + dt.timedelta(minutes=30)
    started = time.perf_counter()
    for offset in range(0, settled, 200_000):
        rows = _rows(min(200_000, settled - offset), start=offset, due=None, now=now)
        for row in rows:
            row.update(next_check_at=later, confirmed_at=now - dt.timedelta(minutes=30))
        _bulk(engine, rows)
    due = _rows(100, start=settled, due=None, now=now)
    for row in due:
        row.update(next_check_at=now, confirmed_at=now - dt.timedelta(hours=1, seconds=1))
    _bulk(engine, due)
    seeded = time.perf_counter() - started
    times = _timed_passes(
        engine,
        url,
        now,
        # the same 100 due again, first age not yet done
        "UPDATE transfer SET next_check_at = ?, last_checked_at = NULL, reverify_done = 0 "
        "WHERE id > ?",
        settled,
        reverified=100,
    )
    engine.dispose()
    return _figures(settled, seeded, times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transfers", type=int, default=10_000)
    parser.add_argument("--settled", type=int, default=1_000_000)
    parser.add_argument(
        "--only-ledger", action="store_true", help="skip the lookup throughput runs"
    )
    args = parser.parse_args()
    import logging

    from payrecon.logconfig import configure_logging

    configure_logging(level=logging.WARNING, json=True)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for concurrency in () if args.only_ledger else (8, 32):
            count = args.transfers if concurrency == 32 else min(args.transfers, 2_000)
            r = throughput(count, concurrency, workdir)
            print(
                f"lookups: {r['count']} transfers, concurrency {concurrency}, latency "
                f"{LATENCY}s: {r['seconds']:.1f} s, {r['rate']:.0f} lookups/s "
                f"(ceiling {r['ceiling']:.0f}/s, {100 * r['rate'] / r['ceiling']:.0f} %)"
            )
        b = big_ledger(args.settled, workdir)
        print(
            f"pass on SQLite with {b['settled']:,} settled + 100 due: "
            f"{b['pass_seconds']:.3f} s (worst of 3: {b['pass_seconds_max']:.3f} s; "
            f"seeding took {b['seed_seconds']:.0f} s)"
        )
        r = reverify_ledger(args.settled, workdir)
        print(
            f"pass on SQLite with {r['settled']:,} settled awaiting a later age + 100 due for "
            f"re-verification: {r['pass_seconds']:.3f} s (worst of 3: "
            f"{r['pass_seconds_max']:.3f} s; {r['pass_seconds'] / b['pass_seconds']:.2f}x the "
            f"pass above; seeding took {r['seed_seconds']:.0f} s)"
        )


if __name__ == "__main__":
    main()
