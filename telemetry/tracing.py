"""OpenTelemetry tracing: off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set (docs/rules.md:
Observability).

Off, nothing of OpenTelemetry is imported and every helper here costs a global lookup: `span`
hands back one shared no-op context manager, `links_to` no links. On, spans go to an OTLP/HTTP
exporter (the standard `OTEL_*` variables apply: endpoint, headers, service name) through a
batching processor, and `inject` writes the W3C `traceparent` of the current span into outgoing
headers. The process's tracer provider is ours, not OpenTelemetry's global one, so tests can
switch tracing on and off again (`configure_tracing(..., exporter=...)`, `shutdown_tracing`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import (
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from typing import Any, NamedTuple, ParamSpec, TypeVar

import httpx

from ledger.events import trace as event_trace

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"

_NO_SPAN = contextlib.nullcontext()
_MAX_LINKS = 1024
_T = TypeVar("_T")
_P = ParamSpec("_P")


class _State:
    """The process's tracer and provider while tracing is on (None off), and the few
    OpenTelemetry names the per-request helpers use, looked up once when it is switched on."""

    tracer: Any = None
    provider: Any = None
    processor: Any = None  # the provider's one span processor (a request span ends into it)
    scope: Any = None  # the instrumentation scope of the spans made here
    kinds: Any = None
    link: Any = None
    current_span: Any = None
    inject: Any = None
    extract: Any = None


_state = _State()


def enabled() -> bool:
    """True while spans are recorded."""
    return _state.tracer is not None


def configure_tracing(
    service: str,
    *,
    environ: Mapping[str, str] | None = None,
    exporter: Any = None,
) -> bool:
    """Switch tracing on for this process when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (or an
    `exporter` is given, for tests: spans are then exported as each ends); True when on.

    `service` is the `service.name` unless `OTEL_SERVICE_NAME` says otherwise."""
    env = os.environ if environ is None else environ
    if exporter is None and not env.get(ENDPOINT_VARIABLE):
        return False
    # Imported here: a process with tracing off never pays for OpenTelemetry's import.
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    shutdown_tracing()
    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or service})
    # A group commit's span links to up to a whole batch of requests (256 by default); the
    # SDK's default keeps 128 links. OTEL_SPAN_LINK_COUNT_LIMIT still decides when it is set.
    links = None if os.environ.get("OTEL_SPAN_LINK_COUNT_LIMIT") else _MAX_LINKS
    provider = TracerProvider(resource=resource, span_limits=SpanLimits(max_links=links))
    processor: Any
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # The base endpoint gets the signal's path, as every OpenTelemetry SDK does; the
        # exporter reads the other standard variables (headers, timeout, a traces endpoint).
        endpoint = None
        if not env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
            endpoint = env[ENDPOINT_VARIABLE].rstrip("/") + "/v1/traces"
        processor = BatchSpanProcessor(
            OTLPSpanExporter(endpoint=endpoint),
            # A loaded receiver makes thousands of spans a second: a queue of 2,048 (the
            # default) fills between exports and drops them. Batches stay at the default 512
            # so one export's encoding holds the loop back for little at a time.
            max_queue_size=8192,
        )
    else:
        processor = SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    from opentelemetry import context as otel_context
    from opentelemetry import propagate
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import (
        Link,
        NonRecordingSpan,
        SpanContext,
        SpanKind,
        TraceFlags,
        get_current_span,
        set_span_in_context,
    )
    from opentelemetry.trace.status import Status, StatusCode

    _Requests.names = _RequestNames(
        ReadableSpan,
        SpanContext,
        NonRecordingSpan,
        set_span_in_context,
        otel_context.attach,
        otel_context.detach,
        TraceFlags(TraceFlags.SAMPLED),
        TraceFlags(TraceFlags.DEFAULT),
        SpanKind.SERVER,
        Status(StatusCode.ERROR),
    )

    _state.kinds, _state.link, _state.current_span = SpanKind, Link, get_current_span
    _state.inject, _state.extract = propagate.inject, propagate.extract
    _state.provider, _state.processor = provider, processor
    _state.scope = InstrumentationScope("payrecon")
    _state.tracer = provider.get_tracer("payrecon")
    # Relay events written from now on keep the span they are written in (ledger.events.trace).
    event_trace.install(current_traceparent)
    return True


def shutdown_tracing() -> None:
    """Export what is buffered and switch tracing off."""
    provider, _state.provider, _state.tracer = _state.provider, None, None
    _state.processor = None
    event_trace.install(None)
    if provider is not None:
        provider.shutdown()


def span(
    name: str,
    attributes: Mapping[str, Any] | None = None,
    *,
    links: Sequence[Any] = (),
    kind: str = "INTERNAL",
    context: Any = None,
) -> contextlib.AbstractContextManager[Any]:
    """A span around a block, the current one inside it (a shared no-op when tracing is off).

    `kind` names an OpenTelemetry SpanKind (SERVER, CLIENT, INTERNAL); `context` a parent taken
    from incoming headers (`extract`)."""
    tracer = _state.tracer
    if tracer is None:
        return _NO_SPAN
    return tracer.start_as_current_span(  # type: ignore[no-any-return]
        name,
        context=context,
        kind=_state.kinds[kind],
        attributes=attributes,
        links=links,
    )


class _RequestNames(NamedTuple):
    readable: Any
    span_context: Any
    non_recording: Any
    in_context: Any
    attach: Any
    detach: Any
    sampled: Any
    unsampled: Any
    server: Any
    error: Any


class _Requests:
    names: _RequestNames


def parse_traceparent(value: str) -> Any:
    """The remote span context a W3C `traceparent` names, or None (malformed, or tracing off):
    what OpenTelemetry's propagator would read, without building a whole context for it."""
    if _state.tracer is None:
        return None
    parts = value.strip().split("-")
    if len(parts) < 4:
        return None
    version, trace_hex, span_hex, flags_hex = parts[:4]
    if (
        len(version) != 2
        or version == "ff"
        or (version == "00" and len(parts) != 4)
        or len(trace_hex) != 32
        or len(span_hex) != 16
        or len(flags_hex) != 2
        or not _HEX.issuperset(version + trace_hex + span_hex + flags_hex)
    ):
        return None
    trace_id, span_id = int(trace_hex, 16), int(span_hex, 16)
    if not trace_id or not span_id:
        return None
    names = _Requests.names
    flags = names.sampled if int(flags_hex, 16) & 1 else names.unsampled
    return names.span_context(trace_id, span_id, True, flags)


_HEX = frozenset("0123456789abcdef")


class RequestSpan:
    """The SERVER span of one HTTP request, made without the SDK's span machinery.

    Every route but the webhook gets one (the webhook's recorded span is its group commit's,
    receiver/ingest.py). An SDK span (sampler, limits, locks, a span processor's
    on_start and on_end) cost as much again as its export. This one takes its ids from the
    provider's generator, asks the provider's sampler, is current (as a non-recording span, so
    links and child spans find it) while the request runs, and on exit hands one finished,
    immutable span to the processor, as the SDK would. `status` is set by the caller."""

    __slots__ = ("_token", "attributes", "context", "name", "parent", "start", "status")

    def __init__(self, name: str, attributes: dict[str, Any], parent: Any) -> None:
        self.name, self.attributes, self.parent = name, attributes, parent
        self.status = 0
        provider, names = _state.provider, _Requests.names
        if parent is None:
            trace_id, parent_context = provider.id_generator.generate_trace_id(), None
        else:
            trace_id = parent.trace_id
            parent_context = names.in_context(names.non_recording(parent))
        decision = provider.sampler.should_sample(parent_context, trace_id, name, names.server)
        sampled = decision.decision.is_sampled()
        self.context = names.span_context(
            trace_id,
            provider.id_generator.generate_span_id(),
            False,
            names.sampled if sampled else names.unsampled,
        )
        self.start = time.time_ns()
        self._token = names.attach(names.in_context(names.non_recording(self.context)))

    def __enter__(self) -> RequestSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        names = _Requests.names
        names.detach(self._token)
        processor = _state.processor
        if processor is None or not self.context.trace_flags.sampled:
            return
        if self.status:
            self.attributes["http.response.status_code"] = self.status
        processor.on_end(
            names.readable(
                name=self.name,
                context=self.context,
                parent=self.parent,
                resource=_state.provider.resource,
                attributes=self.attributes,
                kind=names.server,
                start_time=self.start,
                end_time=time.time_ns(),
                instrumentation_scope=_state.scope,
                **({"status": names.error} if self.status >= 500 or exc[0] is not None else {}),
            )
        )


def request_span(
    name: str, attributes: dict[str, Any], traceparent: str | None
) -> RequestSpan | None:
    """The SERVER span of a request, continuing `traceparent` when it names a valid one; None
    while tracing is off."""
    if _state.tracer is None:
        return None
    parent = parse_traceparent(traceparent) if traceparent else None
    return RequestSpan(name, attributes, parent)


def traced(
    name: str,
) -> Callable[[Callable[_P, Coroutine[Any, Any, _T]]], Callable[_P, Coroutine[Any, Any, _T]]]:
    """Decorate a coroutine function: each call runs in a span called `name`."""

    def decorate(
        function: Callable[_P, Coroutine[Any, Any, _T]],
    ) -> Callable[_P, Coroutine[Any, Any, _T]]:
        @functools.wraps(function)
        async def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
            if _state.tracer is None:
                return await function(*args, **kwargs)
            with span(name):
                return await function(*args, **kwargs)

        return wrapper

    return decorate


def links_to(traceparents: Iterable[bytes | str | None]) -> list[Any]:
    """Links to the spans incoming W3C `traceparent` headers name (for a span that serves many
    requests, such as a group commit): one per valid value, in order; absent, malformed or
    hostile values make none, and tracing off makes none at all."""
    if _state.tracer is None:
        return []
    link, links = _state.link, []
    for value in traceparents:
        if not value:
            continue
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        context = parse_traceparent(text[:_TRACEPARENT_MAX])
        if context is not None:
            links.append(link(context))
    return links


# Longer than any traceparent a version this code knows writes (55 characters); a future
# version may append fields, which parse_traceparent ignores, but no more is read than this.
_TRACEPARENT_MAX = 512


def traceparent_of(context: Any) -> str | None:
    """The W3C `traceparent` of a span context (None when it is not a valid one)."""
    if context is None or not context.is_valid:
        return None
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


def current_traceparent() -> str | None:
    """The current span's W3C `traceparent`, or None (tracing off, or no span)."""
    if _state.tracer is None:
        return None
    return traceparent_of(_state.current_span().get_span_context())


def continued(traceparent: str | None) -> Any:
    """The parent context a stored `traceparent` names (None off, or when there is none): a
    relay attempt continues the trace its event was written in."""
    if _state.tracer is None or not traceparent:
        return None
    return _state.extract({"traceparent": traceparent})


def inject(headers: MutableMapping[str, str]) -> None:
    """Write the current span's W3C `traceparent` (and `tracestate`) into `headers`."""
    if _state.tracer is None:
        return
    _state.inject(headers)


def extract(headers: Mapping[str, str]) -> Any:
    """The parent context named by incoming `traceparent` headers (None when tracing is off)."""
    if _state.tracer is None:
        return None
    return _state.extract(headers)


@contextlib.contextmanager
def statement_import_span(account: str, *, source: str, lines: int | None = None) -> Iterator[Any]:
    """The span of one statement import (docs/rules.md: Observability): the import shell wraps
    its parse-match-store in it; `lines` may be set on the span later (`span.set_attribute`)."""
    attributes: dict[str, Any] = {"payrecon.account": account, "payrecon.source": source}
    if lines is not None:
        attributes["payrecon.lines"] = lines
    with span("statement.import", attributes) as current:
        yield current


async def _traceparent_hook(request: httpx.Request) -> None:
    carrier: dict[str, str] = {}
    inject(carrier)
    request.headers.update(carrier)


def propagate_from(client: httpx.AsyncClient) -> httpx.AsyncClient:
    """Have `client` send the current span's `traceparent` with every request (no-op off)."""
    if _state.tracer is not None:
        hooks = client.event_hooks
        hooks.setdefault("request", []).append(_traceparent_hook)
        client.event_hooks = hooks
    return client


class TraceparentTransport(httpx.AsyncBaseTransport):
    """An httpx transport that adds the current span's `traceparent` to each request, then
    sends it with the transport it wraps (the provider client's seam)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with span("provider.request", {"http.method": request.method}, kind="CLIENT"):
            await _traceparent_hook(request)
            return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class SyncTraceparentTransport(httpx.BaseTransport):
    """`TraceparentTransport` for a synchronous client (serve's payout client)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with span("provider.request", {"http.method": request.method}, kind="CLIENT"):
            carrier: dict[str, str] = {}
            inject(carrier)
            request.headers.update(carrier)
            return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()
