"""`payrecon endpoints add` with a broker URL and `relay once` as a user runs them: the events
reach the broker signed; the password shows in no output (PRODUCT.md: Relay destinations:
message brokers)."""

from __future__ import annotations

import json
import subprocess

import pytest

from ledger.db import create_db_engine
from tests.support import brokers
from tests.support import relay as support
from tests.support.processes import PAYRECON, payrecon_env

PASSWORD = "cli-pw-never-shown-27"


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PAYRECON, *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("kind", brokers.KINDS)
def test_a_broker_endpoint_added_on_the_command_line_gets_verified_events(
    database_url: str, kind: str
) -> None:
    """`endpoints add URL` (credentials in it), events, `relay once --json`: every event in
    the broker verifies with the printed secret; list and logs never show the password."""
    env = payrecon_env(database_url=database_url, relay_keys=support.RELAY_KEYS)
    with brokers.destination(kind) as target:
        if kind == "redis":
            credentials = target.redis_user(PASSWORD)
        elif kind == "nats":
            credentials = f"relay:{PASSWORD}"  # the test server takes any
        else:
            credentials = "guest:guest"
        added = _run(["endpoints", "add", target.url(credentials), "--json"], env)
        assert added.returncode == 0, added.stderr
        record = json.loads(added.stdout)
        assert "@" not in record["url"]
        engine = create_db_engine(database_url)
        events = support.emit_events(engine, support.add_transfers(engine, 4))
        engine.dispose()
        once = _run(["relay", "once", "--json"], env)
        assert once.returncode == 0, once.stderr
        summary = json.loads(once.stdout)
        assert summary["delivered"] == len(events) and summary["pending"] == 0
        listed = _run(["endpoints", "list"], env)
        messages = target.messages()
    assert {m.broker_id for m in messages} == set(events)
    assert all(m.verified([record["secret"]]) for m in messages)
    for output in (added, once, listed):
        assert PASSWORD not in output.stdout + output.stderr


def test_a_bad_broker_url_is_exit_2_with_one_line_and_no_password(database_url: str) -> None:
    """A duplicate option is refused before anything is stored, without echoing the URL's
    password."""
    env = payrecon_env(database_url=database_url, relay_keys=support.RELAY_KEYS)
    bad = _run(["endpoints", "add", f"amqp://u:{PASSWORD}@10.0.0.9/?exchange=a&exchange=b"], env)
    assert bad.returncode == 2
    assert "given twice" in bad.stderr and PASSWORD not in bad.stderr + bad.stdout
    assert len(bad.stderr.strip().splitlines()) == 1
