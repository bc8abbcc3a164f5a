"""Tracing on: spans for webhooks and their group commit (linked), relay attempts and provider
calls, the W3C traceparent on what goes out, exported in memory and to a real OTLP/HTTP
receiver by the real commands."""

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


def test_webhooks_and_their_group_commit_are_linked_spans(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """Each webhook request is a SERVER span (continuing an incoming traceparent); each group
    commit a span linked to the requests it stored."""
    app = create_app(Settings(_env_file=None), engine=engine)

    async def deliver(base: str) -> list[int]:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            answers = await asyncio.gather(
                *(
                    client.post(
                        "/webhook",
                        content=encode(success_body(f"TRF-trace-{i}")),
                        headers={"Content-Type": "application/json", "traceparent": INCOMING},
                    )
                    for i in range(6)
                )
            )
        return [answer.status_code for answer in answers]

    with running_server(TracedRequests(app)) as base:
        assert asyncio.run(deliver(base)) == [200] * 6
    requests = _by_name(exporter, "POST /webhook")
    assert len(requests) == 6
    assert {format(span.context.trace_id, "032x") for span in requests} == {"a" * 32}
    assert all(span.attributes["http.response.status_code"] == 200 for span in requests)
    batches = _by_name(exporter, "ingest.group_commit")
    linked = {link.context.span_id for batch in batches for link in batch.links}
    assert linked == {span.context.span_id for span in requests}
    assert sum(batch.attributes["payrecon.batch_size"] for batch in batches) == 6


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
    """With OTEL_EXPORTER_OTLP_ENDPOINT set, `serve` exports the webhook and its linked group
    commit, `relay run` the attempt whose traceparent the endpoint received: one payout from
    webhook to relay delivery."""
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
                headers={"Content-Type": "application/json"},
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
    [webhook] = receiver.named("POST /webhook")
    assert webhook.service == "payrecon-serve"
    [batch] = receiver.named("ingest.group_commit")
    assert batch.links == ((webhook.trace_id, webhook.span_id),)
    [attempt] = receiver.named("relay.attempt")
    assert attempt.service == "payrecon-relay"
    assert attempt.attributes["payrecon.subject"].startswith("transfer:")
    [delivered] = consumer.received
    # The orphan transfer the webhook created is known by its merchant reference.
    assert delivered.subject == "m-TRF-otlp-1"
    assert _ids(delivered.headers["traceparent"]) == (attempt.trace_id, attempt.span_id)
    # One trace: the attempt is a child of the webhook's request span, in another process.
    assert (attempt.trace_id, attempt.parent_id) == (webhook.trace_id, webhook.span_id)


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
    """Each webhook's relay events keep its request's traceparent (not its batch's); the
    attempt that delivers it is a child of that request span, and the consumer receives the
    attempt's traceparent: one trace id from the webhook to the consumer."""
    consumer = support.Consumer()
    app = create_app(Settings(_env_file=None), engine=engine)
    with support.serving(consumer) as url:
        support.add_endpoint(engine, url + "/hook", types="transfer.reported")
        # The relay runs while serve does: serve's stop switches tracing off (its flush).
        with running_server(TracedRequests(app)) as base:
            assert _webhooks(base, [f"TRF-one-{i}" for i in range(3)], {}) == [200] * 3
            support.run_until(engine, lambda: len(consumer.received) >= 3, limit=30)
    requests = {span.context.span_id: span for span in _by_name(exporter, "POST /webhook")}
    assert len(requests) == 3
    # Each orphan webhook writes transfer.reported and finding.opened, both in its trace.
    stored = sorted(_stored(engine), key=lambda row: (row[1] or "", row[0]))
    assert sorted(kind for kind, _ in stored) == ["finding.opened"] * 3 + ["transfer.reported"] * 3
    assert stored == [
        (kind, _traceparent(span))
        for span in sorted(requests.values(), key=_traceparent)
        for kind in ("finding.opened", "transfer.reported")
    ]
    attempts = _by_name(exporter, "relay.attempt")
    assert len(attempts) == 3
    for attempt in attempts:
        request = requests[attempt.parent.span_id]
        assert attempt.context.trace_id == request.context.trace_id
    received = {_ids(hook.headers["traceparent"]) for hook in consumer.received}
    assert received == {
        (f"{a.context.trace_id:032x}", f"{a.context.span_id:016x}") for a in attempts
    }
    # Three separate traces, one per webhook: a batch joins them only by its links.
    assert len({span.context.trace_id for span in requests.values()}) == 3


def test_an_incoming_traceparent_is_continued_to_the_consumer(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """A provider's traceparent on the webhook is the trace the consumer's delivery joins."""
    consumer = support.Consumer()
    app = create_app(Settings(_env_file=None), engine=engine)
    with support.serving(consumer) as url:
        support.add_endpoint(engine, url + "/hook", types="transfer.reported")
        # The relay runs while serve does: serve's stop switches tracing off (its flush).
        with running_server(TracedRequests(app)) as base:
            assert _webhooks(base, ["TRF-in-1"], {"traceparent": INCOMING}) == [200]
            support.run_until(engine, lambda: len(consumer.received) >= 1, limit=30)
    [hook] = consumer.received
    assert _ids(hook.headers["traceparent"])[0] == "a" * 32


def test_the_per_delivery_path_keeps_the_request_trace(
    engine: Engine, exporter: InMemorySpanExporter
) -> None:
    """A delivery applied on its own (the batch's fallback) stores its request's traceparent,
    not the current span's."""
    add_endpoints(engine)
    delivery = webhook("transfer.success", "TRF-single-1")
    delivery.traceparent = INCOMING
    with tracing.span("elsewhere"), write_session(engine) as session:
        apply_delivery(session, delivery, now=dt.datetime.now(dt.UTC))
    assert {traceparent for _, traceparent in _stored(engine)} == {INCOMING}


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
