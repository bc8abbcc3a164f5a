"""Prometheus metrics of one receiver app, on a registry of its own (nothing global)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

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
    # Labelled children by label value: `.labels()` costs more than the increment itself.
    _by_outcome: dict[str, Counter] = field(default_factory=dict, repr=False)
    _by_reason: dict[str, Counter] = field(default_factory=dict, repr=False)

    def delivered(self, outcome: str) -> None:
        """Count one delivery with `outcome`."""
        child = self._by_outcome.get(outcome)
        if child is None:
            child = self._by_outcome[outcome] = self.deliveries.labels(outcome=outcome)
        child.inc()

    def refused(self, reason: str) -> None:
        """Count one delivery refused by a sender check for `reason`."""
        child = self._by_reason.get(reason)
        if child is None:
            child = self._by_reason[reason] = self.auth_failures.labels(reason=reason)
        child.inc()

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


class ReadinessGauge(Collector):
    """`payrecon_ready`: 1 when `/readyz` would answer 200, else 0 with the reason as a label
    (the same check, cached for a second: receiver.readiness)."""

    def __init__(self, state: Callable[[], str]) -> None:
        self._state = state

    def describe(self) -> list[Metric]:
        return []  # registering must not touch the database

    def collect(self) -> Iterator[Metric]:
        try:
            state = self._state()
        except Exception:  # the check itself failed: not ready, and the scrape still answers
            state = "unavailable"
        gauge = GaugeMetricFamily(
            "payrecon_ready",
            "1 when /readyz answers 200; else 0, labelled with its reason.",
            labels=["reason"],
        )
        gauge.add_metric(["ok" if state == "ok" else str(state)], 1 if state == "ok" else 0)
        yield gauge
