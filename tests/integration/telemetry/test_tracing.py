"""Tracing on: one span per group commit for the webhook (linked to the senders' traces, no span
per request), request spans on other routes, relay attempts and provider calls, the W3C
traceparent on what goes out, exported in memory and to a real OTLP/HTTP receiver by the real
commands."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import Engine, select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ledger.db import read_session, write_session
from ledger.models import RelayEvent
from ledger.queries import ExpectedTransfer, register_expected
from payrecon.app import create_app
from payrecon.settings import Settings
from provider.async_client import AsyncProviderClient
from receiver.apply import apply_delivery
from receiver.fastpath import is_webhook
from telemetry import tracing
from telemetry.asgi import TracedRequests
from tests.integration.relay.outbox_helpers import add_endpoints, webhook
from tests.integration.relay.test_reconciler_events import _answer, _pass
from tests.support import relay as support
from tests.support.otlp import OtlpReceiver
from tests.support.processes import PAYRECON, payrecon_env, start_serve, stop
from tests.support.servers import running_server
from tests.support.webhooks import encode, success_body

INCOMING = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
SENDER = (int("a" * 32, 16), int("b" * 16, 16))  # the trace and span INCOMING names


def _traced(app: object) -> TracedRequests:
    """The app as `serve` wraps it while tracing is on: request spans on all but the webhook."""
    return TracedRequests(app, untraced=is_webhook)  # type: ignore[arg-type]


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    """Tracing on for the test, spans kept in memory; off again after."""
    memory = InMemorySpanExporter()
    assert tracing.configure_tracing("payrecon-test", exporter=memory)
    yield memory
    tracing.shutdown_tracing()


def _ids(traceparent: str) -> tuple[str, str]:
    """The trace and span ids of a W3C traceparent whose flags say "sampled"."""
    version, trace_id, span_id, flags = traceparent.split("-")
    assert version == "00" and int(flags, 16) & 1
    return trace_id, span_id


def _by_name(exporter: InMemorySpanExporter, name: str) -> list:  # type: ignore[type-arg]
    return [span for span in exporter.get_finished_spans() if span.name == name]


def test_webhooks_record_only_their_group_commit_linked_to_the_senders(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """A webhook makes no span of its own; each group commit is one span linked to the trace
    each of its senders named, counting its outcomes; other routes keep their request spans."""
    app = create_app(Settings(_env_file=None), engine=engine)
    with running_server(_traced(app)) as base:
        sent = {"traceparent": INCOMING}
        assert _webhooks(base, [f"TRF-trace-{i}" for i in range(6)], sent) == [200] * 6
        assert _webhooks(base, ["TRF-trace-0", "TRF-untraced"], {}) == [200] * 2
        assert httpx.get(base + "/healthz", timeout=10).status_code == 200
    assert _by_name(exporter, "POST /webhook") == []
    [health] = _by_name(exporter, "GET /healthz")
    assert health.attributes["http.response.status_code"] == 200
    batches = _by_name(exporter, "ingest.group_commit")
    links = [(link.context.trace_id, link.context.span_id) for b in batches for link in b.links]
    assert links == [SENDER] * 6  # the two sent without a traceparent link to nothing
    assert all(batch.parent is None for batch in batches)  # a root: no sender decides for it
    assert sum(batch.attributes["payrecon.batch_size"] for batch in batches) == 8
    outcomes: dict[str, int] = {}
    for batch in batches:
        for key, value in batch.attributes.items():
            if key.startswith("payrecon.outcome."):
                outcomes[key] = outcomes.get(key, 0) + value
    assert outcomes == {"payrecon.outcome.accepted": 7, "payrecon.outcome.duplicate": 1}


HOSTILE = [
    "00-" + "a" * 32 + "-" + "0" * 16 + "-01",  # an all-zero span id
    "ff-" + "a" * 32 + "-" + "b" * 16 + "-01",  # version ff
    "00-" + "A" * 32 + "-" + "b" * 16 + "-01",  # upper case
    "garbage",
    "0" * 6000,  # oversized (within what the server accepts as a header)
    "00-" + "a" * 32 + "-" + "b" * 16 + "-01\u00e9".encode().decode("latin-1"),
]


def test_malformed_or_hostile_traceparents_are_not_linked_and_change_no_answer(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """A webhook whose traceparent is malformed, oversized or repeated is stored and answered
    as any other; only a valid one (the first of repeated headers) is linked."""
    app = create_app(Settings(_env_file=None), engine=engine)
    with running_server(_traced(app)) as base:
        for i, value in enumerate(HOSTILE):
            answer = httpx.post(
                base + "/webhook",
                content=encode(success_body(f"TRF-hostile-{i}")),
                headers=[
                    (b"content-type", b"application/json"),
                    (b"traceparent", value.encode("latin-1")),
                ],
                timeout=10,
            )
            assert (answer.status_code, answer.json()["outcome"]) == (200, "accepted")
        repeated = [
            ("traceparent", INCOMING),
            ("traceparent", "00-" + "c" * 32 + "-" + "d" * 16 + "-01"),
        ]
        answer = httpx.post(
            base + "/webhook",
            content=encode(success_body("TRF-hostile-repeated")),
            headers=[("Content-Type", "application/json"), *repeated],
            timeout=10,
        )
        assert answer.status_code == 200
    batches = _by_name(exporter, "ingest.group_commit")
    assert sum(batch.attributes["payrecon.batch_size"] for batch in batches) == len(HOSTILE) + 1
    links = [(link.context.trace_id, link.context.span_id) for b in batches for link in b.links]
    assert links == [SENDER]


def test_a_relay_attempt_is_a_span_and_its_traceparent_reaches_the_endpoint(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """The consumer receives the traceparent of the attempt's span."""
    consumer = support.Consumer()
    with support.serving(consumer) as url:
        support.add_endpoint(engine, url + "/hook")
        support.emit_events(engine, support.add_transfers(engine, 1))
        support.run_until(engine, lambda: len(consumer.received) >= 1, limit=30)
    [attempt] = _by_name(exporter, "relay.attempt")
    context = attempt.context
    expected = (f"{context.trace_id:032x}", f"{context.span_id:016x}")
    assert _ids(consumer.received[0].headers["traceparent"]) == expected
    assert attempt.attributes["payrecon.attempt"] == 1


def test_provider_calls_carry_the_traceparent(exporter: InMemorySpanExporter) -> None:
    """A lookup through the reconciler's client sends the traceparent of its request span."""
    seen: list[str | None] = []

    async def transaction(request: Request) -> JSONResponse:
        seen.append(request.headers.get("traceparent"))
        return JSONResponse({"status": False, "message": "Transaction not found"}, 404)

    provider = Starlette(routes=[Route("/{path:path}", transaction)])

    async def ask(base: str) -> None:
        client = AsyncProviderClient(
            base,
            "sk_test_" + "x" * 20,
            max_retries=0,
            transport=tracing.TraceparentTransport(httpx.AsyncHTTPTransport()),
        )
        # The 404's error is not what is tested here.
        async with client:
            with tracing.span("reconcile.lookup"), contextlib.suppress(Exception):
                await client.get_transaction("TRF-1")

    with running_server(provider) as base:
        asyncio.run(ask(base))
    [request_span] = _by_name(exporter, "provider.request")
    context = request_span.context
    [header] = seen
    assert header is not None
    assert _ids(header) == (f"{context.trace_id:032x}", f"{context.span_id:016x}")
    [lookup] = _by_name(exporter, "reconcile.lookup")
    assert request_span.parent.span_id == lookup.context.span_id


def test_statement_import_helper_records_a_span(exporter: InMemorySpanExporter) -> None:
    """The helper the statement import shell calls makes one span with its account."""
    with tracing.statement_import_span("0123456789", source="mt940", lines=3):
        pass
    [span] = _by_name(exporter, "statement.import")
    assert span.attributes["payrecon.account"] == "0123456789"
    assert span.attributes["payrecon.lines"] == 3


def test_serve_and_relay_run_export_to_a_local_otlp_receiver(
    database_url: str, engine: Engine
) -> None:
    """With OTEL_EXPORTER_OTLP_ENDPOINT set, `serve` exports the webhook's group commit (linked
    to the sender's trace), `relay run` the attempt whose traceparent the endpoint received: one
    payout from the webhook's batch to relay delivery, one trace."""
    receiver = OtlpReceiver()
    consumer = support.Consumer()
    with running_server(receiver.app()) as otlp, support.serving(consumer) as hook:
        support.add_endpoint(engine, hook + "/hook", types="transfer.reported")
        env = {
            **payrecon_env(database_url=database_url, relay_keys=support.RELAY_KEYS),
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp,
        }
        serve, port = start_serve(env)
        try:
            answer = httpx.post(
                f"http://127.0.0.1:{port}/webhook",
                content=encode(success_body("TRF-otlp-1")),
                headers={"Content-Type": "application/json", "traceparent": INCOMING},
                timeout=10,
            )
            assert answer.status_code == 200
        finally:
            stop(serve)  # a clean stop exports what the batch processor holds
        relay = subprocess.Popen([*PAYRECON, "relay", "run"], env=env)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not consumer.received:
                time.sleep(0.1)
        finally:
            stop(relay)
    assert receiver.named("POST /webhook") == []  # the webhook's span is its batch's
    [batch] = receiver.named("ingest.group_commit")
    assert batch.service == "payrecon-serve"
    assert batch.links == (("a" * 32, "b" * 16),)  # the sender's trace, linked
    assert batch.attributes["payrecon.outcome.accepted"] == 1
    [attempt] = receiver.named("relay.attempt")
    assert attempt.service == "payrecon-relay"
    assert attempt.attributes["payrecon.subject"].startswith("transfer:")
    [delivered] = consumer.received
    # The orphan transfer the webhook created is known by its merchant reference.
    assert delivered.subject == "m-TRF-otlp-1"
    assert _ids(delivered.headers["traceparent"]) == (attempt.trace_id, attempt.span_id)
    # One trace: the attempt is a child of the webhook's batch span, in another process.
    assert (attempt.trace_id, attempt.parent_id) == (batch.trace_id, batch.span_id)
    assert batch.trace_id != "a" * 32


def _traceparent(span) -> str:  # type: ignore[no-untyped-def]
    context = span.context
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


def _stored(engine: Engine) -> list[tuple[str, str | None]]:
    """Each relay event's type and stored traceparent, in id order."""
    with read_session(engine) as session:
        rows = session.execute(
            select(RelayEvent.type, RelayEvent.traceparent).order_by(RelayEvent.id)  # type: ignore[arg-type]
        ).all()
    return [(row[0], row[1]) for row in rows]


def _webhooks(base: str, references: list[str], headers: dict[str, str]) -> list[int]:
    async def deliver() -> list[int]:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            answers = await asyncio.gather(
                *(
                    client.post(
                        "/webhook",
                        content=encode(success_body(reference)),
                        headers={"Content-Type": "application/json", **headers},
                    )
                    for reference in references
                )
            )
        return [answer.status_code for answer in answers]

    return asyncio.run(deliver())


def test_a_webhook_and_its_relay_delivery_are_one_trace(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """Each webhook's relay events keep its batch span's traceparent; the attempt that
    delivers one is a child of that batch span, and the consumer receives the attempt's
    traceparent: one trace id from the webhook's group commit to the consumer."""
    consumer = support.Consumer()
    app = create_app(Settings(_env_file=None), engine=engine)
    with support.serving(consumer) as url:
        support.add_endpoint(engine, url + "/hook", types="transfer.reported")
        # The relay runs while serve does: serve's stop switches tracing off (its flush).
        with running_server(_traced(app)) as base:
            assert _webhooks(base, [f"TRF-one-{i}" for i in range(3)], {}) == [200] * 3
            support.run_until(engine, lambda: len(consumer.received) >= 3, limit=30)
    batches = {span.context.span_id: span for span in _by_name(exporter, "ingest.group_commit")}
    assert sum(batch.attributes["payrecon.batch_size"] for batch in batches.values()) == 3
    # Each orphan webhook writes transfer.reported and finding.opened, both in its batch's trace.
    stored = _stored(engine)
    assert sorted(kind for kind, _ in stored) == ["finding.opened"] * 3 + ["transfer.reported"] * 3
    assert {traceparent for _, traceparent in stored} <= {
        _traceparent(batch) for batch in batches.values()
    }
    attempts = _by_name(exporter, "relay.attempt")
    assert len(attempts) == 3
    for attempt in attempts:
        batch = batches[attempt.parent.span_id]
        assert attempt.context.trace_id == batch.context.trace_id
    received = {_ids(hook.headers["traceparent"]) for hook in consumer.received}
    assert received == {
        (f"{a.context.trace_id:032x}", f"{a.context.span_id:016x}") for a in attempts
    }


def test_an_incoming_traceparent_is_linked_not_continued(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """A provider's traceparent on the webhook is linked from the batch span; the consumer's
    delivery joins the batch's trace, not the sender's (docs/architecture.md, "Tracing the
    webhook")."""
    consumer = support.Consumer()
    app = create_app(Settings(_env_file=None), engine=engine)
    with support.serving(consumer) as url:
        support.add_endpoint(engine, url + "/hook", types="transfer.reported")
        # The relay runs while serve does: serve's stop switches tracing off (its flush).
        with running_server(_traced(app)) as base:
            assert _webhooks(base, ["TRF-in-1"], {"traceparent": INCOMING}) == [200]
            support.run_until(engine, lambda: len(consumer.received) >= 1, limit=30)
    [batch] = _by_name(exporter, "ingest.group_commit")
    assert [(link.context.trace_id, link.context.span_id) for link in batch.links] == [SENDER]
    [hook] = consumer.received
    assert _ids(hook.headers["traceparent"])[0] == f"{batch.context.trace_id:032x}"


def test_the_per_delivery_path_keeps_the_current_span(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """A delivery applied on its own (the batch's fallback, which runs inside the batch span)
    stores the current span's traceparent, never the sender's."""
    add_endpoints(engine)
    delivery = webhook("transfer.success", "TRF-single-1")
    delivery.traceparent = INCOMING.encode()
    with tracing.span("ingest.group_commit"), write_session(engine) as session:
        apply_delivery(session, delivery, now=dt.datetime.now(dt.UTC))
    [batch] = _by_name(exporter, "ingest.group_commit")
    assert {traceparent for _, traceparent in _stored(engine)} == {_traceparent(batch)}


def test_reconcile_pass_events_carry_the_pass_context(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """The confirmation and finding events a pass writes keep the pass's span as their trace
    context."""
    add_endpoints(engine)
    t0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
    with write_session(engine) as session:
        register_expected(session, ExpectedTransfer("R1", 100_000, 1000), now=t0)
    _pass(engine, {"R1": _answer("R1", 100_100)}, t0 + dt.timedelta(seconds=1))
    [reconcile] = _by_name(exporter, "reconcile.pass")
    assert _stored(engine) == [
        ("transfer.confirmed", _traceparent(reconcile)),
        ("finding.opened", _traceparent(reconcile)),
    ]


def test_tracing_off_stores_no_trace_context(engine: Engine) -> None:
    """Off, a webhook's event and a pass's events store no traceparent."""
    assert not tracing.enabled()
    consumer = support.Consumer()
    app = create_app(Settings(_env_file=None), engine=engine)
    with support.serving(consumer) as url:
        support.add_endpoint(engine, url + "/hook")
        with running_server(app) as base:
            assert _webhooks(base, ["TRF-off-1"], {"traceparent": INCOMING}) == [200]
        support.run_until(engine, lambda: len(consumer.received) >= 1, limit=30)
    assert [traceparent for _, traceparent in _stored(engine)] == [None, None]
    assert "traceparent" not in consumer.received[0].headers
