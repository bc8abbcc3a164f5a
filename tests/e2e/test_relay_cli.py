"""`payrecon relay once|run|replay` as a user runs them: subprocesses on a real ledger."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, update

from ledger.db import create_db_engine, write_session
from ledger.lease import hold_lease
from ledger.models import Lease, RelayDelivery
from ledger.types import utcnow
from relay.claims import RELAY_LEASE
from tests.support import relay as support
from tests.support.databases import SqliteFactory
from tests.support.processes import PAYRECON, payrecon_env, stop
from tests.support.relay import Consumer


@pytest.fixture
def consumer() -> Iterator[tuple[Consumer, str]]:
    """A consumer serving on a free port, and its base URL."""
    found = Consumer()
    with support.serving(found) as url:
        yield found, url


def _env(database_url: str, **extra: str) -> dict[str, str]:
    return payrecon_env(database_url=database_url, relay_keys=support.RELAY_KEYS, **extra)


def _payrecon(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PAYRECON, *args], env=env, capture_output=True, text=True, timeout=120)


def test_relay_once_json_delivers_what_is_due_and_counts_it(
    database_url: str, engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """Three events, one endpoint failing: the JSON counts attempts, deliveries, pending."""
    found, url = consumer
    _, secret = support.add_endpoint(engine, f"{url}/hook")
    support.add_endpoint(engine, f"{url}/missing")  # 404 every time
    found.secrets.append(secret)
    support.emit_events(engine, support.add_transfers(engine, 3))

    done = _payrecon(["relay", "once", "--json"], _env(database_url))

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"attempted": 6, "delivered": 3, "failed": 0, "pending": 3}
    assert sorted(item.verified for item in found.received) == [True] * 3


def test_relay_replay_queues_again_and_refuses_an_unknown_endpoint(
    database_url: str, engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """replay prints how many it queued; an unknown endpoint or type exits 2 with one line."""
    _, url = consumer
    endpoint_id, _ = support.add_endpoint(engine, f"{url}/hook")
    support.emit_events(engine, support.add_transfers(engine, 2))
    env = _env(database_url)
    assert _payrecon(["relay", "once"], env).returncode == 0

    done = _payrecon(["relay", "replay", "--endpoint", str(endpoint_id), "--json"], env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"queued": 2}
    missing = _payrecon(["relay", "replay", "--endpoint", "999"], env)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    wrong = _payrecon(["relay", "replay", "--type", "transfer.nope"], env)
    assert wrong.returncode == 2 and "unknown event type" in wrong.stderr


def test_sigterm_lets_relay_run_finish_the_attempt_in_flight_and_exit_0(
    database_url: str, engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """SIGTERM while the consumer takes 1.5 s: the attempt completes, is recorded, exit 0."""
    found, url = consumer
    support.add_endpoint(engine, f"{url}/slow")
    process = subprocess.Popen(
        [*PAYRECON, "relay", "run"],
        env=_env(database_url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        support.emit_events(engine, support.add_transfers(engine, 1))
        deadline = time.monotonic() + 30
        while not found.received and time.monotonic() < deadline:
            time.sleep(0.02)
        assert found.received, "the worker never sent the event"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        stop(process, kill=True)
    [delivery] = support.deliveries(engine)
    assert delivery.status == "delivered"
    [attempt] = support.attempts(engine)
    assert attempt.status_code == 200 and attempt.response_head == "slow ok"
    assert support.count(engine, RelayDelivery, RelayDelivery.claimed_by.is_not(None)) == 0  # type: ignore[union-attr]


def test_the_workers_log_lines_hold_no_secret(
    database_url: str, engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """Attempts are logged (a failure at info) without the endpoints' secrets or the keys."""
    _, url = consumer
    _, good = support.add_endpoint(engine, f"{url}/hook")
    _, bad = support.add_endpoint(engine, f"{url}/missing?token=hush-hush-123")
    support.emit_events(engine, support.add_transfers(engine, 1))

    done = _payrecon(["relay", "once"], _env(database_url))

    assert done.returncode == 0, done.stderr
    assert "relay_attempt" in done.stderr and "404" in done.stderr
    for secret in (good, bad, support.RELAY_KEYS, "hush-hush-123"):
        assert secret not in done.stdout + done.stderr


def test_relay_once_on_sqlite_waits_its_turn_while_another_runner_holds_the_lease(
    tmp_path: Path, sqlite_factory: SqliteFactory
) -> None:
    """SQLite: with the relay lease held by a live runner, `relay once` exits 1 naming it and
    sends nothing; once the lease expires it delivers."""
    database_url = sqlite_factory.new()
    engine = create_db_engine(database_url)
    with support.serving(Consumer()) as url:
        support.add_endpoint(engine, f"{url}/hook")
        support.emit_events(engine, support.add_transfers(engine, 1))
        with write_session(engine) as session:
            # Long enough for a slow machine to start the command while it holds.
            hold_lease(session, RELAY_LEASE, owner="other:1:abc", now=utcnow(), ttl=120)

        held = _payrecon(["relay", "once", "--json"], _env(database_url))
        assert held.returncode == 1 and "other:1:abc" in held.stderr
        assert held.stderr.count("\n") == 1
        with write_session(engine) as session:
            # The other runner's lease runs out (as if 120 s had passed).
            session.execute(
                update(Lease).where(Lease.name == RELAY_LEASE).values(expires_at=utcnow())
            )
        done = _payrecon(["relay", "once", "--json"], _env(database_url))
    engine.dispose()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["delivered"] == 1
