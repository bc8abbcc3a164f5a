"""The broker consumers printed in docs/relay.md, run as printed against the real brokers while
the relay publishes to them: they verify payrecon's events and drop forged ones."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine

from ledger.db import write_session
from ledger.models import RelayDelivery
from ledger.types import utcnow
from relay import signing
from relay.keys import new_secret
from relay.replay import queue_again
from tests.support import brokers
from tests.support import relay as support
from tests.support.docs import marked_block
from tests.support.processes import stop


def _delivered(engine: Engine) -> int:
    return support.count(engine, RelayDelivery, RelayDelivery.status == "delivered")


def _lines(log: Path, word: str) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith(word)]


@pytest.mark.parametrize("kind", brokers.KINDS)
def test_the_documented_broker_consumer_verifies_each_event(
    engine: Engine, tmp_path: Path, kind: str
) -> None:
    """The relay publishes each event twice (a replay); a stranger publishes events signed with
    another secret: the consumer prints each event once, and calls the strangers' forged."""
    (tmp_path / "payrecon_events.py").write_text(
        marked_block("relay.md", "relay-broker-handle").code
    )
    (tmp_path / "consumer.py").write_text(marked_block("relay.md", f"relay-consumer-{kind}").code)
    with brokers.destination(kind) as target:
        endpoint_id, secret = support.add_endpoint(engine, target.url())
        events = support.emit_events(engine, support.add_transfers(engine, 3), rounds=2)
        support.run_until(engine, lambda: _delivered(engine) == len(events))
        with write_session(engine) as session:
            queue_again(session, endpoint_id=endpoint_id, now=utcnow())
        support.run_until(engine, lambda: _delivered(engine) == 2 * len(events))
        for number, event_id in enumerate(events[:3], start=7):
            body = json.dumps(
                {
                    "id": event_id,
                    "type": "transfer.confirmed",
                    "sequence": number,
                    "data": {"reference": "ref-forged"},
                }
            )
            target.publish(body, signing.headers([new_secret()], event_id, int(time.time()), body))
        env = {
            "PATH": "/usr/bin:/bin",
            "PAYRECON_ENDPOINT_SECRET": secret,
            "AMQP_URL": "amqp://guest:guest@127.0.0.1:5672/",
            "QUEUE": target.queue,
            "NATS_URL": "nats://127.0.0.1:4222",
            "NATS_SUBJECTS": target.subjects,
            "REDIS_URL": "redis://127.0.0.1:6379/0",
            "STREAM": target.key,
        }
        log = tmp_path / "consumer.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "consumer.py"],
                cwd=tmp_path,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 60
            while len(_lines(log, "verified")) < len(events) or len(_lines(log, "forged")) < 3:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        finally:
            stop(process)
    verified = _lines(log, "verified")
    assert len(verified) == len(events)
    assert sorted(line.split()[-1] for line in verified) == ["1", "1", "1", "2", "2", "2"]
    assert len(_lines(log, "forged")) == 3
