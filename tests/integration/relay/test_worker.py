"""The delivery worker against real local consumers, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine
from starlette.responses import Response

from ledger.db import write_session
from ledger.models import RelayAttempt, RelayDelivery, RelayEndpoint
from ledger.types import utcnow
from relay import endpoints
from relay.claims import Job
from relay.replay import queue_again
from tests.support import relay as support
from tests.support.relay import Consumer


@pytest.fixture
def consumer() -> Iterator[tuple[Consumer, str]]:
    """A consumer serving on a free port, and its base URL."""
    found = Consumer()
    with support.serving(found) as url:
        yield found, url


def test_an_event_is_delivered_signed_with_the_standard_headers(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """One event reaches the consumer once, its signature verifies, webhook-id is the body id."""
    found, url = consumer
    _, secret = support.add_endpoint(engine, f"{url}/hook")
    found.secrets.append(secret)
    [event_id] = support.emit_events(engine, support.add_transfers(engine, 1))

    summary = asyncio.run(support.worker(engine).once())

    assert summary.as_dict() == {"attempted": 1, "delivered": 1, "failed": 0, "pending": 0}
    [got] = found.received
    assert got.verified
    assert got.event_id == event_id == got.headers["webhook-id"]
    assert got.headers["user-agent"].startswith("payrecon/")
    assert got.headers["content-type"] == "application/json"
    [delivery] = support.deliveries(engine)
    assert delivery.status == "delivered" and delivery.attempts == 1
    [attempt] = support.attempts(engine)
    assert attempt.status_code == 200 and attempt.outcome == "delivered"
    assert attempt.response_head == "ok"


def test_during_a_rotation_both_signatures_verify(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """After rotate-secret, a consumer holding either the old or the new secret verifies."""
    found, url = consumer
    endpoint_id, old = support.add_endpoint(engine, f"{url}/hook")
    with write_session(engine) as session:
        _, new = endpoints.rotate_secret(session, support.box(), endpoint_id, now=utcnow())
    support.emit_events(engine, support.add_transfers(engine, 1))

    asyncio.run(support.worker(engine).once())

    [got] = found.received
    assert len(got.headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        assert Consumer(secrets=[secret]).verify(got.body, got.headers), secret
    assert not Consumer(secrets=[old]).verify(got.body + b" ", got.headers)


def _every(engine: Engine, status: str, total: int) -> bool:
    return support.count(engine, RelayDelivery, RelayDelivery.status == status) == total  # type: ignore[arg-type]


def test_a_failing_consumer_is_retried_and_then_failed_with_one_alert(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """500 every time: three attempts (0.1 s, 0.2 s apart), then failed and one alert."""
    found, url = consumer
    found.respond = lambda path, n: Response("down", status_code=500)
    support.add_endpoint(engine, f"{url}/hook")
    support.emit_events(engine, support.add_transfers(engine, 1))

    summary = support.run_until(engine, lambda: _every(engine, "failed", 1))

    assert (summary.attempted, summary.failed) == (3, 1)
    assert len(found.received) == 3
    assert [a.outcome for a in support.attempts(engine)] == ["retry", "retry", "failed"]
    assert all(a.status_code == 500 and a.response_head == "down" for a in support.attempts(engine))
    [alert] = support.relay_alerts(engine)
    assert alert.key.startswith("relay-delivery-failed:")
    # Named by the reference its event carries, not by a ledger id.
    assert alert.title.endswith(" did not take the event for transfer ref-1")
    # Another worker finds nothing to do and alerts nothing more.
    asyncio.run(support.worker(engine).once())
    assert len(support.relay_alerts(engine)) == 1


def test_many_deliveries_failing_at_once_send_one_alert_per_endpoint(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """Five events failing for good on one endpoint in the same hour alert once, not five
    times; the alert names the replay command that sends them all again."""
    found, url = consumer
    found.respond = lambda path, n: Response("down", status_code=500)
    support.add_endpoint(engine, f"{url}/hook")
    support.emit_events(engine, support.add_transfers(engine, 5))

    endpoint_id = support.deliveries(engine)[0].endpoint_id
    hours = {utcnow().strftime("%Y-%m-%dT%H")}
    support.run_until(engine, lambda: _every(engine, "failed", 5))
    hours.add(utcnow().strftime("%Y-%m-%dT%H"))  # a second hour only if the run crossed one

    alerts = support.relay_alerts(engine)
    # Keyed by endpoint and hour, never by event: one key per hour the run touched, at most.
    assert {a.key for a in alerts} <= {f"relay-delivery-failed:{endpoint_id}:{h}" for h in hours}
    assert len(alerts) == 1 or len(hours) == 2
    assert "--failed-only" in alerts[0].body and "not alerted again" in alerts[0].body


def test_retry_after_of_a_503_is_waited_for(engine: Engine, consumer: tuple[Consumer, str]) -> None:
    """A 503 with Retry-After: 1 delays the next attempt by at least a second, not 0.1 s."""
    found, url = consumer
    found.respond = lambda path, n: (
        Response("busy", status_code=503, headers={"retry-after": "1"}) if n == 1 else Response()
    )
    support.add_endpoint(engine, f"{url}/hook")
    support.emit_events(engine, support.add_transfers(engine, 1))

    support.run_until(engine, lambda: _every(engine, "delivered", 1))

    first, second = support.attempts(engine)
    assert (first.status_code, second.status_code) == (503, 200)
    assert second.attempted_at - first.attempted_at >= dt.timedelta(seconds=1)


def _raw_server() -> tuple[socket.socket, threading.Thread]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"SSH-2.0-OpenSSH_9.0\r\n\x00\xff garbage\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread


def test_hostile_consumers_are_each_a_recorded_failed_attempt(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """Hang, 3xx, 100 MB body, non-HTTP port, TLS error, unresolvable name: one failed
    attempt each, and the worker still delivers to a good endpoint beside them."""
    found, url = consumer
    raw, _ = _raw_server()
    port = url.rsplit(":", 1)[1]
    hostile = {
        "hang": f"{url}/hang",
        "redirect": f"{url}/redirect",
        "huge": f"{url}/huge",
        "not-http": f"http://127.0.0.1:{raw.getsockname()[1]}/hook",
        "tls": f"https://127.0.0.1:{port}/hook",
        "dns": "http://no-such-host.invalid/hook",
    }
    ids = {name: support.add_endpoint(engine, target)[0] for name, target in hostile.items()}
    _, secret = support.add_endpoint(engine, f"{url}/hook")
    found.secrets.append(secret)
    support.emit_events(engine, support.add_transfers(engine, 1))
    try:
        summary = asyncio.run(support.worker(engine, timeout=1.0, schedule=(60.0,)).once())
    finally:
        raw.close()

    assert summary.attempted == 7 and summary.delivered == 1
    assert [item.verified for item in found.received] == [True]
    by_endpoint = {a.delivery_id: a for a in support.attempts(engine)}
    delivery_of = {d.endpoint_id: d.id for d in support.deliveries(engine)}
    for name, endpoint_id in ids.items():
        attempt: RelayAttempt = by_endpoint[delivery_of[endpoint_id]]
        assert attempt.outcome == "retry", name
        assert attempt.status_code is not None or attempt.error, name
        assert attempt.duration_ms < 30_000, name
    assert by_endpoint[delivery_of[ids["redirect"]]].status_code == 302
    huge = by_endpoint[delivery_of[ids["huge"]]]
    assert huge.status_code == 500 and huge.response_head is not None
    assert len(huge.response_head) <= 1024
    assert "no answer within" in (by_endpoint[delivery_of[ids["hang"]]].error or "")


def test_an_endpoint_failing_past_disable_after_is_disabled_once_and_enable_resumes(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """Failures for longer than disable_after disable the endpoint with one alert; enabling it
    sends its pending deliveries."""
    found, url = consumer
    found.respond = lambda path, n: Response(status_code=500)
    endpoint_id, _ = support.add_endpoint(engine, f"{url}/hook")
    support.emit_events(engine, support.add_transfers(engine, 2))

    def disabled() -> bool:
        with write_session(engine) as session:
            return not endpoints.get(session, endpoint_id).enabled

    support.run_until(engine, disabled, disable_after=0.3, schedule=(0.1,) * 50)

    assert disabled()
    assert [a.key.split(":")[0] for a in support.relay_alerts(engine)] == [
        "relay-endpoint-disabled"
    ]
    tried = len(found.received)
    assert asyncio.run(support.worker(engine).once()).attempted == 0  # nothing sent

    found.respond = None
    with write_session(engine) as session:
        endpoints.set_enabled(session, endpoint_id, True, now=utcnow())
    support.run_until(engine, lambda: _every(engine, "delivered", 2))
    assert len(found.received) == tried + 2
    assert len(support.relay_alerts(engine)) == 1


def test_replay_queues_the_same_event_again(engine: Engine, consumer: tuple[Consumer, str]) -> None:
    """replay makes a new delivery of the same event id; --failed-only takes only failed ones."""
    found, url = consumer
    endpoint_id, _ = support.add_endpoint(engine, f"{url}/hook")
    [event_id] = support.emit_events(engine, support.add_transfers(engine, 1))
    asyncio.run(support.worker(engine).once())

    with write_session(engine) as session:
        assert queue_again(session, now=utcnow(), failed_only=True) == 0
        assert queue_again(session, now=utcnow(), endpoint_id=endpoint_id) == 1
        assert queue_again(session, now=utcnow()) == 0  # already pending again
    asyncio.run(support.worker(engine).once())

    assert found.ids() == [event_id, event_id]


def test_a_stop_releases_the_claims_of_deliveries_not_yet_sent(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """A worker claims more than it has in flight; at a stop, the claimed deliveries it did not
    send are released (due again at once), and the attempt in flight is finished."""
    found, url = consumer

    def slow(path: str, count: int) -> Response:
        time.sleep(0.5)
        return Response(status_code=204)

    found.respond = slow
    support.add_endpoint(engine, f"{url}/hook")
    support.emit_events(engine, support.add_transfers(engine, 4))  # four subjects

    summary = support.run_until(engine, lambda: len(found.received) >= 1, concurrency=1)

    assert (summary.attempted, summary.delivered) == (1, 1)
    pending = [d for d in support.deliveries(engine) if d.status == "pending"]
    assert len(pending) == 3
    assert all(d.claimed_by is None and d.claimed_until is None for d in pending)


def test_a_claim_too_old_to_outlast_an_attempt_is_not_used(engine: Engine) -> None:
    """A waiting delivery whose claim would end before its attempt could is dropped unsent."""
    running = support.worker(engine, timeout=2.0)
    endpoint = RelayEndpoint(id=1, url="http://127.0.0.1:9/hook", secret_sealed="x")
    soon = utcnow() + dt.timedelta(seconds=1)  # under the 2 s an attempt may take
    job = Job(1, 0, endpoint, "evt_1", "{}", "transfer:1", 1, claimed_until=soon)
    waiting = collections.deque([job])
    inflight: set[asyncio.Task[Any]] = set()
    running._start(None, waiting, inflight)  # type: ignore[arg-type]
    assert not waiting and not inflight
