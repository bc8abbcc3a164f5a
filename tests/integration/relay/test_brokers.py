"""Broker destinations against the real brokers (PRODUCT.md: Relay destinations: message
brokers): RabbitMQ, NATS JetStream and Redis Streams, each on SQLite and PostgreSQL ledgers."""

from __future__ import annotations

import json
import threading
from collections import defaultdict

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import Engine, select

from ledger.db import read_session, write_session
from ledger.models import RelayAttempt, RelayDelivery, RelayEndpoint
from ledger.types import utcnow
from relay.replay import queue_again
from telemetry import tracing
from tests.support import brokers
from tests.support import relay as support
from tests.support.brokers import Message

pytestmark = pytest.mark.parametrize("kind", brokers.KINDS)

LONG_SCHEDULE = (0.05,) * 200  # retried for a long while, never failed for good in a test


def _delivered(engine: Engine) -> int:
    return support.count(engine, RelayDelivery, RelayDelivery.status == "delivered")


def _refused(engine: Engine) -> int:
    return support.count(engine, RelayAttempt, RelayAttempt.outcome == "retry")


def _sequences(messages: list[Message]) -> dict[str, list[int]]:
    seen: dict[str, list[int]] = defaultdict(list)
    for message in messages:
        document = json.loads(message.body)
        seen[document["data"]["reference"]].append(document["sequence"])
    return seen


def test_each_event_arrives_with_its_body_id_and_a_signature_that_verifies(
    engine: Engine, kind: str
) -> None:
    """Every event is published once, its body as stored, its id as the broker's message id
    and `webhook-id`, signed so that `standardwebhooks` verifies it with the endpoint secret."""
    with brokers.destination(kind) as target:
        _, secret = support.add_endpoint(engine, target.url())
        events = support.emit_events(engine, support.add_transfers(engine, 5), rounds=2)
        support.run_until(engine, lambda: _delivered(engine) == len(events))
        messages = target.messages()
    assert sorted(message.broker_id for message in messages) == sorted(events)
    for message in messages:
        assert message.verified([secret])
        assert message.headers["webhook-id"] == message.broker_id
        assert json.loads(message.body)["id"] == message.broker_id
    attempts = support.attempts(engine)
    assert len(attempts) == len(events)
    assert all(a.status_code is None and a.error is None for a in attempts)


def test_fifty_subjects_stay_in_order_while_the_broker_refuses_now_and_then(
    engine: Engine, kind: str
) -> None:
    """Four events for each of 50 subjects while the destination refuses publishes in bursts:
    every event arrives, and each subject's events arrive in sequence order."""
    with brokers.destination(kind) as target:
        credentials = target.redis_user("pw-order-1") if kind == "redis" else None
        support.add_endpoint(engine, target.url(credentials))
        events = support.emit_events(engine, support.add_transfers(engine, 50), rounds=4)
        stop = threading.Event()

        def flap() -> None:
            # Refusing from the start until a refused attempt is on record (so the test never
            # depends on the worker reaching the broker inside a refusing burst), then in bursts.
            while not stop.wait(0.05) and _refused(engine) == 0:
                pass
            refusing = True
            while not stop.wait(0.15):
                refusing = not refusing
                target.refuse(refusing)
            target.refuse(False)

        target.refuse(True)
        flapper = threading.Thread(target=flap)
        flapper.start()
        try:
            support.run_until(
                engine,
                lambda: _delivered(engine) == len(events),
                limit=120,
                schedule=LONG_SCHEDULE,
            )
        finally:
            stop.set()
            flapper.join()
        messages = target.messages()
    assert _refused(engine) > 0  # the refusals did happen
    assert _delivered(engine) == len(events)
    for sequences in _sequences(messages).values():
        assert sequences == sorted(sequences)
        assert sorted(set(sequences)) == [1, 2, 3, 4]


def test_an_unreachable_broker_gets_failed_attempts_then_every_event(
    engine: Engine, kind: str
) -> None:
    """The broker cut off behind a proxy: attempts fail and are recorded; once it is back,
    every event is delivered and none is lost."""
    proxy = brokers.Proxy(brokers.PORTS[kind])
    try:
        with brokers.destination(kind) as target:
            _, secret = support.add_endpoint(engine, target.url(port=proxy.port))
            first = support.emit_events(engine, support.add_transfers(engine, 3))
            support.run_until(engine, lambda: _delivered(engine) == len(first))
            proxy.down()
            events = first + support.emit_events(engine, support.add_transfers(engine, 10))
            support.run_until(
                engine, lambda: _refused(engine) >= 5, schedule=LONG_SCHEDULE, timeout=1.0
            )
            proxy.up()
            support.run_until(
                engine, lambda: _delivered(engine) == len(events), schedule=LONG_SCHEDULE
            )
            messages = target.messages()
    finally:
        proxy.close()
    assert {m.broker_id for m in messages} == set(events)
    assert all(m.verified([secret]) for m in messages)
    errors = [a.error for a in support.attempts(engine) if a.outcome == "retry"]
    assert errors and all(errors)


def test_replay_publishes_the_same_event_ids_again(engine: Engine, kind: str) -> None:
    """`relay replay` of an endpoint's events publishes each again under its own id (JetStream
    drops the second copy itself: `Nats-Msg-Id` is its de-duplication key, and the ack says
    duplicate)."""
    with brokers.destination(kind) as target:
        endpoint_id, secret = support.add_endpoint(engine, target.url())
        events = support.emit_events(engine, support.add_transfers(engine, 4))
        support.run_until(engine, lambda: _delivered(engine) == len(events))
        with write_session(engine) as session:
            queued = queue_again(session, endpoint_id=endpoint_id, now=utcnow())
        assert queued
        support.run_until(engine, lambda: _delivered(engine) == 2 * len(events))
        messages = target.messages()
    ids = [m.broker_id for m in messages]
    assert all(m.verified([secret]) for m in messages)
    if kind == "nats":
        assert sorted(ids) == sorted(events)
        heads = [a.response_head or "" for a in support.attempts(engine)]
        assert sum("(duplicate)" in head for head in heads) == len(events)
    else:
        assert sorted(ids) == sorted(events * 2)


def test_credentials_are_sealed_and_never_stored_in_the_url(engine: Engine, kind: str) -> None:
    """The URL's user:password is kept sealed; the stored URL, the attempts' errors and the
    alerts hold no password, and the worker still connects with it."""
    password = "s3cret-pw-" + "x" * 6
    with brokers.destination(kind) as target:
        if kind == "redis":
            credentials = target.redis_user(password)
        elif kind == "rabbitmq":
            credentials = "guest:guest"
            password = "guest"
        else:
            credentials = f"relay:{password}"  # a server without auth takes any
        endpoint_id, _ = support.add_endpoint(engine, target.url(credentials))
        events = support.emit_events(engine, support.add_transfers(engine, 2))
        support.run_until(engine, lambda: _delivered(engine) == len(events))
        assert len(target.messages()) == len(events)
    with read_session(engine) as session:
        endpoint = session.execute(
            select(RelayEndpoint).where(RelayEndpoint.id == endpoint_id)  # type: ignore[arg-type]
        ).scalar_one()
    assert password not in endpoint.url
    assert "@" not in endpoint.url
    assert endpoint.credentials_sealed is not None
    assert password not in endpoint.credentials_sealed
    assert support.box().open(endpoint.credentials_sealed) == credentials


def test_a_traced_attempt_sends_its_traceparent_with_the_message(engine: Engine, kind: str) -> None:
    """With tracing on, each message carries the W3C traceparent of its relay attempt's span,
    as an HTTP delivery does (PRODUCT.md: Observability)."""
    memory = InMemorySpanExporter()
    assert tracing.configure_tracing("payrecon-test", exporter=memory)
    try:
        with brokers.destination(kind) as target:
            support.add_endpoint(engine, target.url())
            events = support.emit_events(engine, support.add_transfers(engine, 2))
            support.run_until(engine, lambda: _delivered(engine) == len(events))
            messages = target.messages()
    finally:
        tracing.shutdown_tracing()
    attempts = {
        f"{span.context.trace_id:032x}-{span.context.span_id:016x}"
        for span in memory.get_finished_spans()
        if span.name == "relay.attempt"
    }
    sent = {message.headers["traceparent"][3:-3] for message in messages}
    assert len(messages) == len(events) and sent == attempts
