"""An OTLP/HTTP trace sink for bench/bench_tracing.py: takes `POST /v1/traces` and drops it."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


async def traces(request: Request) -> Response:
    await request.body()
    # An empty ExportTraceServiceResponse is zero bytes of protobuf.
    return Response(b"", media_type="application/x-protobuf")


def create_app() -> Starlette:
    """The sink's app (`uvicorn --factory bench.otlp_sink:create_app`)."""
    return Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])
