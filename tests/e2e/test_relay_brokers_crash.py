"""`relay run` killed with SIGKILL mid-stream to a broker, and two of them at once on
PostgreSQL: nothing lost, nothing unsigned, few duplicates (PRODUCT.md: Relay destinations:
message brokers)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine

from ledger.db import create_db_engine
from ledger.models import RelayDelivery
from tests.support import brokers
from tests.support import relay as support
from tests.support.processes import PAYRECON, payrecon_env, stop

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("kind", brokers.KINDS)]


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
        assert time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.02)


def _delivered(engine: Engine) -> int:
    return support.count(engine, RelayDelivery, RelayDelivery.status == "delivered")


def test_kill_9_mid_stream_to_a_broker_loses_nothing(
    database_url: str, tmp_path: Path, kind: str
) -> None:
    """SIGKILL twice while 300 events are published, a fresh worker each time: the broker
    holds every event, each verifying with the endpoint's secret."""
    engine = create_db_engine(database_url)
    log = tmp_path / "workers.log"
    with brokers.destination(kind) as target:
        _, secret = support.add_endpoint(engine, target.url())
        events = support.emit_events(engine, support.add_transfers(engine, 60), rounds=5)
        process = _start(database_url, log)
        try:
            for threshold in (60, 150):
                _wait(lambda t=threshold: _delivered(engine) >= t, 120, log)  # type: ignore[misc]
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
                process = _start(database_url, log)
            _wait(lambda: _delivered(engine) == len(events), 180, log)
        finally:
            stop(process)
        messages = target.messages()
    engine.dispose()
    assert {m.broker_id for m in messages} == set(events)
    assert all(m.verified([secret]) for m in messages)


@pytest.mark.usefixtures("postgres_factory")
def test_two_workers_on_postgresql_publish_with_at_most_1_percent_twice(
    postgres_url: str, tmp_path: Path, kind: str
) -> None:
    """Two `relay run` on one PostgreSQL ledger publish 500 events: all there, ≤ 1 % twice."""
    engine = create_db_engine(postgres_url)
    log = tmp_path / "workers.log"
    with brokers.destination(kind) as target:
        _, secret = support.add_endpoint(engine, target.url())
        workers = [_start(postgres_url, log), _start(postgres_url, log)]
        try:
            events = support.emit_events(engine, support.add_transfers(engine, 100), rounds=5)
            _wait(lambda: _delivered(engine) == len(events), 240, log)
        finally:
            for worker in workers:
                stop(worker)
        messages = target.messages()
    engine.dispose()
    received = [m.broker_id for m in messages]
    duplicates = sum(n - 1 for n in Counter(received).values())
    print(f"{kind}: 500 events, {len(received)} published, {duplicates} duplicates")
    assert set(received) == set(events) and len(events) == 500
    assert duplicates <= 5
    assert all(m.verified([secret]) for m in messages)
