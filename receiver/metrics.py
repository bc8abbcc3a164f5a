"""Prometheus metrics of one receiver app, on a registry of its own (nothing global)."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST


@dataclass(frozen=True)
class ReceiverMetrics:
    """The receiver's instruments."""

    registry: CollectorRegistry
    deliveries: Counter
    auth_failures: Counter
    ingest_seconds: Histogram
    batch_size: Histogram
    batch_seconds: Histogram

    def render(self) -> bytes:
        """The Prometheus text exposition of this registry."""
        return generate_latest(self.registry)


def create_metrics() -> ReceiverMetrics:
    """Build a fresh registry and the receiver's instruments on it."""
    registry = CollectorRegistry()
    return ReceiverMetrics(
        registry=registry,
        deliveries=Counter(
            "payrecon_webhook_deliveries",
            "Webhook deliveries by outcome (accepted, duplicate, conflicting, ignored, invalid, "
            "too_large, unavailable).",
            ["outcome"],
            registry=registry,
        ),
        auth_failures=Counter(
            "payrecon_webhook_auth_failures",
            "Deliveries refused by a sender check, by reason.",
            ["reason"],
            registry=registry,
        ),
        ingest_seconds=Histogram(
            "payrecon_webhook_ingest_seconds",
            "Time from the start of a webhook request to its answer.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=registry,
        ),
        batch_size=Histogram(
            "payrecon_ingest_batch_size",
            "Deliveries committed per group-commit transaction.",
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
            registry=registry,
        ),
        batch_seconds=Histogram(
            "payrecon_ingest_batch_seconds",
            "Duration of one group-commit transaction.",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
            registry=registry,
        ),
    )
