"""Tracing on: spans for webhooks and their group commit (linked), relay attempts and provider
calls, the W3C traceparent on what goes out, exported in memory and to a real OTLP/HTTP
receiver by the real commands."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from payrecon.app import create_app
from payrecon.settings import Settings
from provider.async_client import AsyncProviderClient
from telemetry import tracing
from telemetry.asgi import TracedRequests
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
