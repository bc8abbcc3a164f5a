"""The workers' `/metrics`: `reconcile run` and `relay run` serve their registry on
`--metrics-port` / `PAYRECON_METRICS_PORT` (docs/rules.md: Observability)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from sqlalchemy import Engine

from telemetry.gauges import register_ledger_gauges


def worker_registry(engine: Engine) -> CollectorRegistry:
    """A fresh registry holding the ledger's gauges; the worker adds its own instruments."""
    registry = CollectorRegistry()
    register_ledger_gauges(registry, engine)
    return registry


def serve_metrics(registry: CollectorRegistry, *, host: str, port: int) -> Callable[[], None]:
    """Serve `registry` at http://host:port/metrics from a daemon thread; the function that
    stops it. OSError when the address cannot be bound."""
    server: Any
    server, thread = start_http_server(port, addr=host, registry=registry)

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return stop
