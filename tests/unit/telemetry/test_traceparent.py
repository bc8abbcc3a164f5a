"""A request's incoming traceparent is read as OpenTelemetry's propagator reads it."""

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
    current = tracing.request_span("POST /webhook", {"url.path": "/webhook"}, CASES[0])
    assert current is not None
    with current:
        assert tracing.current_traceparent() == tracing.traceparent_of(current.context)
        link = tracing.link_to_current()
        current.status = 503
    assert tracing.current_traceparent() is None
    [span] = memory.get_finished_spans()
    assert link.context.span_id == span.context.span_id
    assert f"{span.context.trace_id:032x}" == TRACE and span.parent.span_id == int(SPAN, 16)
    assert span.attributes["http.response.status_code"] == 503
    assert not span.status.is_ok
