"""A local OTLP/HTTP trace receiver: a tiny Starlette app taking `POST /v1/traces` (protobuf),
keeping every span it gets."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


@dataclass(frozen=True)
class ReceivedSpan:
    """One exported span, as the receiver decoded it."""

    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    links: tuple[tuple[str, str], ...]  # (trace id, span id)
    attributes: dict[str, Any]


@dataclass
class OtlpReceiver:
    """Collects the spans posted to /v1/traces."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def traces(self, request: Request) -> Response:
        if request.headers.get("content-type") != "application/x-protobuf":
            return Response(status_code=415)
        message = ExportTraceServiceRequest()
        message.ParseFromString(await request.body())
        for resource_spans in message.resource_spans:
            service = next(
                (
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                ),
                "",
            )
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {
                        a.key: getattr(a.value, a.value.WhichOneof("value"))
                        for a in span.attributes
                    }
                    received = ReceivedSpan(
                        service=service,
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        links=tuple((ln.trace_id.hex(), ln.span_id.hex()) for ln in span.links),
                        attributes=attributes,
                    )
                    with self.lock:
                        self.spans.append(received)
        body = ExportTraceServiceResponse().SerializeToString()
        return Response(body, media_type="application/x-protobuf")

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/traces", self.traces, methods=["POST"])])

    def named(self, name: str) -> list[ReceivedSpan]:
        with self.lock:
            return [span for span in self.spans if span.name == name]
