"""The transport seam (relay.transport): the worker with an in-memory transport, a JetStream
stream that is missing, and transports closed when the worker stops."""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from typing import Any

import pytest
from sqlalchemy import Engine

from ledger.models import RelayAttempt, RelayDelivery
from payrecon.wiring import keyed_alert
from relay.claims import Job
from relay.recorder import Recorder
from relay.transports.memory import MemoryTransport
from relay.window import CEILING, PREFETCH
from relay.worker import Worker
from tests.support import brokers
from tests.support import relay as support


def _delivered(engine: Engine) -> int:
    return support.count(engine, RelayDelivery, RelayDelivery.status == "delivered")


def _run_until_delivered(
    engine: Engine, transport: MemoryTransport, count: int, **config: Any
) -> None:
    """Run a worker on `transport` until `count` deliveries are delivered, then stop it."""

    async def main() -> None:
        worker = Worker(
            engine,
            support.box(),
            support.config(**config),
            alert=keyed_alert(engine, None),
            transport=transport,
        )
        stop = asyncio.Event()
        task = asyncio.create_task(worker.run(stop))
        while await asyncio.to_thread(_delivered, engine) < count:
            await asyncio.sleep(0.05)
        stop.set()
        await task

    asyncio.run(main())


def test_fifty_subjects_stay_in_order_through_a_transport_that_refuses_at_random(
    engine: Engine,
) -> None:
    """An in-memory transport refusing a third of attempts: every event is taken once, and each
    subject's events are taken in sequence order; the transport is closed at the stop."""
    chance = random.Random(27)
    transport = MemoryTransport(
        support.box(), refuse=lambda job: "refused" if chance.random() < 0.33 else None
    )
    support.add_endpoint(engine, "http://10.0.0.7/hook")
    events = support.emit_events(engine, support.add_transfers(engine, 50), rounds=4)

    _run_until_delivered(engine, transport, len(events), schedule=(0.01,) * 100)
    assert transport.closed
    taken = [sent.job for sent in transport.sent if sent.accepted]
    assert sorted(job.event_id for job in taken) == sorted(events)
    by_subject: dict[str, list[int]] = defaultdict(list)
    for job in taken:
        by_subject[job.subject_key].append(job.sequence)
    assert len(by_subject) == 50
    assert all(sequences == [1, 2, 3, 4] for sequences in by_subject.values())
    assert any(not sent.accepted for sent in transport.sent)
    assert all(sent.headers["webhook-signature"].startswith("v1,") for sent in transport.sent)


def test_a_missing_jetstream_stream_fails_attempts_clearly_until_it_exists(
    engine: Engine,
) -> None:
    """No stream takes the subject: attempts fail saying so (the worker keeps running); once
    the stream is made, the events are delivered."""
    target = brokers.Destination("nats")  # not created yet
    try:
        _, secret = support.add_endpoint(engine, target.url())
        events = support.emit_events(engine, support.add_transfers(engine, 3))

        def failures() -> int:
            return support.count(engine, RelayAttempt, RelayAttempt.outcome == "retry")

        support.run_until(engine, lambda: failures() >= 3, schedule=(0.05,) * 100)
        errors = {a.error for a in support.attempts(engine)}
        assert any(e and "no JetStream stream takes subject" in e for e in errors), errors
        assert _delivered(engine) == 0
        target.create()
        support.run_until(engine, lambda: _delivered(engine) == len(events), schedule=(0.05,) * 100)
        messages = target.messages()
    finally:
        target.drop()
    assert {m.broker_id for m in messages} == set(events)
    assert all(m.verified([secret]) for m in messages)


@pytest.mark.parametrize(
    "url",
    [
        "amqp://guest:guest@localhost:5672/?exchange=x",
        "nats://localhost:4222?subject=x.{type}",
        "redis://localhost:6379/0?stream=x",
    ],
)
def test_a_broker_host_resolving_to_loopback_is_refused_at_connect_time(
    engine: Engine, url: str
) -> None:
    """An endpoint registered while loopback was allowed, sent by a worker that does not
    allow it: every attempt fails naming the refusal, and nothing is published."""
    support.add_endpoint(engine, url)  # registered with 127.0.0.0/8 allowed
    events = support.emit_events(engine, support.add_transfers(engine, 2))

    def failures() -> int:
        return support.count(engine, RelayAttempt, RelayAttempt.outcome == "retry")

    support.run_until(engine, lambda: failures() >= len(events), allow=())
    errors = {a.error for a in support.attempts(engine)}
    assert errors and all(e and "refused: localhost resolves to" in e for e in errors), errors
    assert _delivered(engine) == 0


def test_a_backlog_beyond_the_claim_window_is_taken_once_with_claims_capped(
    engine: Engine,
) -> None:
    """3,000 events to an in-memory destination that answers at once: the window grows past
    its start and each event is taken once, while the worker never holds more claims than the
    window's ceiling to send and as many answered, waiting for the ledger (sampled every 100
    attempts)."""
    held: list[int] = []

    claimed = RelayDelivery.claimed_by.is_not(None)  # type: ignore[union-attr]

    def sample(job: Job) -> None:
        if job.delivery_id % 100 == 0:
            held.append(support.count(engine, RelayDelivery, claimed))
        return None

    transport = MemoryTransport(support.box(), refuse=sample)
    support.add_endpoint(engine, "http://10.0.0.7/hook")
    events = support.emit_backlog(engine, 3000)

    _run_until_delivered(engine, transport, len(events))
    assert sorted(sent.job.event_id for sent in transport.sent) == sorted(events)
    assert len(held) == 30
    assert max(held) <= 2 * CEILING
    assert max(held) > PREFETCH * support.config().concurrency  # the window grew


def test_answers_waiting_for_a_slow_ledger_do_not_stop_the_next_claim(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every record takes half a second: while the first is being written, the worker claims
    and sends past its first window (answers waiting for the ledger need no slot), and still
    every event is taken once."""
    record_now = Recorder._record_now

    def slow(self: Recorder, results: list[Any]) -> Any:
        time.sleep(0.5)
        return record_now(self, results)

    monkeypatch.setattr(Recorder, "_record_now", slow)
    before_first_record: list[Job] = []

    def watch(job: Job) -> None:
        if support.count(engine, RelayAttempt) == 0:
            before_first_record.append(job)
        return None

    transport = MemoryTransport(support.box(), refuse=watch)
    support.add_endpoint(engine, "http://10.0.0.7/hook")
    events = support.emit_events(engine, support.add_transfers(engine, 60))

    _run_until_delivered(engine, transport, len(events), concurrency=4)
    assert sorted(sent.job.event_id for sent in transport.sent) == sorted(events)
    assert len(before_first_record) > PREFETCH * 4  # more than the first claim's window
