"""`relay run` killed with SIGKILL, and two of them at once: nothing lost, nothing unsigned."""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger.db import create_db_engine
from tests.support import relay as support
from tests.support.processes import PAYRECON, payrecon_env, stop
from tests.support.relay import Consumer

pytestmark = pytest.mark.slow


def _start(database_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = payrecon_env(
        database_url=database_url,
        relay_keys=support.RELAY_KEYS,
        relay_timeout="2",
        relay_concurrency="4",
        relay_retry_schedule="0.2s,0.5s,1s,1s,1s,1s,1s,1s,1s,1s",
    )
    with log.open("ab") as output:
        return subprocess.Popen([*PAYRECON, "relay", "run"], env=env, stdout=output, stderr=output)


def _wait(condition: Callable[[], bool], limit: float, log: Path) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        # The workers' own lines say why when they stall (a refused connection, a crash).
        assert time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.01)


def test_two_kill_9s_during_500_events_lose_nothing_and_send_nothing_unsigned(
    database_url: str, tmp_path: Path
) -> None:
    """SIGKILL twice mid-run, a fresh worker each time: every event arrives, all signed."""
    engine = create_db_engine(database_url)
    log = tmp_path / "workers.log"
    consumer = Consumer(delay=0.03)
    with support.serving(consumer) as url:
        _, secret = support.add_endpoint(engine, f"{url}/hook")
        consumer.secrets.append(secret)
        events = support.emit_events(engine, support.add_transfers(engine, 100), rounds=5)
        assert len(events) == 500
        process = _start(database_url, log)
        try:
            for threshold in (100, 250):
                _wait(lambda t=threshold: consumer.unique() >= t, 120, log)  # type: ignore[misc]
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
                process = _start(database_url, log)
            _wait(lambda: set(events) <= set(consumer.ids()), 180, log)
        finally:
            stop(process)
    engine.dispose()
    assert all(item.verified for item in consumer.received)
    assert set(consumer.ids()) == set(events)


@pytest.mark.usefixtures("postgres_factory")
def test_two_workers_on_postgresql_deliver_1000_events_with_at_most_1_percent_twice(
    postgres_url: str, tmp_path: Path
) -> None:
    """Two `relay run` on one PostgreSQL ledger: every event delivered, duplicates ≤ 1 %."""
    engine = create_db_engine(postgres_url)
    log = tmp_path / "workers.log"
    consumer = Consumer(delay=0.005)
    with support.serving(consumer) as url:
        _, secret = support.add_endpoint(engine, f"{url}/hook")
        consumer.secrets.append(secret)
        workers = [_start(postgres_url, log), _start(postgres_url, log)]
        try:
            events = support.emit_events(engine, support.add_transfers(engine, 200), rounds=5)
            _wait(lambda: set(events) <= set(consumer.ids()), 240, log)
        finally:
            for worker in workers:
                stop(worker)
    engine.dispose()
    received = consumer.ids()
    duplicates = sum(n - 1 for n in Counter(received).values())
    print(f"1000 events: {len(received)} received, {duplicates} duplicates")
    assert set(received) == set(events) and len(events) == 1000
    assert duplicates <= 10
    assert all(item.verified for item in consumer.received)
