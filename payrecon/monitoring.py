"""What a worker command (`reconcile run`, `relay run`) switches on for monitoring: tracing when
OTEL_EXPORTER_OTLP_ENDPOINT is set, and `/metrics` on --metrics-port or PAYRECON_METRICS_PORT
(docs/operations.md, "Monitoring")."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
import structlog
from prometheus_client import CollectorRegistry
from sqlalchemy import Engine

from payrecon.context import EXIT_USAGE, fail
from payrecon.settings import Settings
from telemetry.server import serve_metrics, worker_registry
from telemetry.tracing import configure_tracing, shutdown_tracing

logger = structlog.get_logger(__name__)

metrics_port_option = click.option(
    "--metrics-port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Serve Prometheus /metrics on this port [default: PAYRECON_METRICS_PORT; unset: none].",
)


@contextlib.contextmanager
def monitored(
    settings: Settings, engine: Engine, *, service: str, port: int | None
) -> Iterator[CollectorRegistry]:
    """The worker's registry (the ledger's gauges already on it), served while the block runs
    when a port is set; tracing on for the block when its variable is set."""
    registry = worker_registry(engine)
    port = port or settings.metrics_port
    stop = None
    if port is not None:
        host = settings.metrics_host
        try:
            stop = serve_metrics(registry, host=host, port=port)
        except OSError as exc:
            fail(f"cannot serve metrics on {host}:{port}: {exc}", EXIT_USAGE)
        logger.info("metrics listening", url=f"http://{host}:{port}/metrics")
    configure_tracing(f"payrecon-{service}")
    try:
        yield registry
    finally:
        shutdown_tracing()
        if stop is not None:
            stop()
