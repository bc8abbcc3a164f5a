"""A request's incoming traceparent is read as OpenTelemetry's propagator reads it, for a
request span's parent and for a group commit's links."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import get_current_span

from telemetry import tracing

TRACE, SPAN = "a" * 32, "b" * 16
CASES = [
    f"00-{TRACE}-{SPAN}-01",
    f"00-{TRACE}-{SPAN}-00",
    f"00-{TRACE}-{SPAN}-03",
    f"01-{TRACE}-{SPAN}-01-later-fields",
    f"00-{TRACE}-{SPAN}-01-extra",  # version 00 has exactly four fields
    f"ff-{TRACE}-{SPAN}-01",  # version ff is invalid
    f"00-{'0' * 32}-{SPAN}-01",  # an all-zero trace id
    f"00-{TRACE}-{'0' * 16}-01",  # an all-zero span id
    f"00-{TRACE.upper()}-{SPAN}-01",  # upper-case hex
    f"00-{TRACE[:-1]}_-{SPAN}-01",  # int() would take an underscore
    f"00-{TRACE}-{SPAN}-0g",
    f"00-{TRACE}-{SPAN}",
    f"00-{TRACE}{SPAN}-01",
    "",
    "garbage",
    "-" * 54,
    f" 00-{TRACE}-{SPAN}-01 ",
    f"00-{TRACE}-{SPAN}-01\t",
    "0" * 10_000,
]


@pytest.fixture
def tracing_on() -> Iterator[None]:
    """Tracing on for the test, spans kept in memory; off again after."""
    assert tracing.configure_tracing("payrecon-test", exporter=InMemorySpanExporter())
    yield
    tracing.shutdown_tracing()


def _otel(value: str) -> tuple[int, int, int] | None:
    context = get_current_span(tracing.extract({"traceparent": value})).get_span_context()
    if not context.is_valid:
        return None
    return context.trace_id, context.span_id, int(context.trace_flags)


def _ours(value: str) -> tuple[int, int, int] | None:
    context = tracing.parse_traceparent(value)
    if context is None:
        return None
    assert context.is_remote
    return context.trace_id, context.span_id, int(context.trace_flags) & 1


@pytest.mark.parametrize("value", CASES)
def test_parse_traceparent_agrees_with_the_propagator(tracing_on: None, value: str) -> None:
    """Valid or not, and the ids and sampled flag read, as the W3C propagator decides."""
    expected = _otel(value)
    if expected is not None:
        expected = (expected[0], expected[1], expected[2] & 1)
    assert _ours(value) == expected


def test_a_request_span_is_current_and_exported_with_its_status(tracing_on: None) -> None:
    """Inside, the request span is the current one (links and children find it); on exit it
    is exported once with its status code, continuing the incoming trace."""
    memory = InMemorySpanExporter()
    tracing.configure_tracing("payrecon-test", exporter=memory)
    current = tracing.request_span("POST /admin", {"url.path": "/admin"}, CASES[0])
    assert current is not None
    with current:
        inside = tracing.current_traceparent()
        current.status = 503
    assert tracing.current_traceparent() is None
    [span] = memory.get_finished_spans()
    assert inside == tracing.traceparent_of(span.context)
    assert f"{span.context.trace_id:032x}" == TRACE and span.parent.span_id == int(SPAN, 16)
    assert span.attributes["http.response.status_code"] == 503
    assert not span.status.is_ok


def test_links_to_links_each_valid_traceparent_as_the_propagator_reads_it(tracing_on: None) -> None:
    """One link per value the propagator finds valid, in order, from text or header bytes;
    absent, malformed and oversized values make none."""
    values: list[bytes | str | None] = [*CASES, None, b"", *(c.encode() for c in CASES)]
    values.append(("00-" + TRACE + "-" + SPAN + "-01").encode() + b"x" * 100_000)
    expected = [_ours(c) for c in CASES if _ours(c) is not None] * 2
    links = tracing.links_to(values)
    got = [(k.context.trace_id, k.context.span_id, int(k.context.trace_flags) & 1) for k in links]
    assert got == expected
    assert all(link.context.is_remote for link in links)


def test_a_group_commit_span_keeps_a_whole_batch_of_links(tracing_on: None) -> None:
    """A batch span keeps a link for each of 256 requests (the SDK's default keeps 128)."""
    memory = InMemorySpanExporter()
    tracing.configure_tracing("payrecon-test", exporter=memory)
    values = [f"00-{TRACE}-{i + 1:016x}-01" for i in range(256)]
    with tracing.span("ingest.group_commit", links=tracing.links_to(values)):
        pass
    [span] = memory.get_finished_spans()
    assert [link.context.span_id for link in span.links] == list(range(1, 257))
