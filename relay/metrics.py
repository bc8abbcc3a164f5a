"""The relay's Prometheus figures, read from the ledger at scrape time (docs/rules.md: Relay).

A custom collector rather than gauges a worker sets: the figures are true whichever process
delivers (several `relay run` workers, or none), and a scrape of `serve` shows them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from ledger.db import read_session
from ledger.errors import DatabaseUnavailableError
from ledger.events.types import AttemptOutcome
from ledger.types import utcnow
from relay.queries import relay_figures

logger = structlog.get_logger(__name__)


class RelayCollector(Collector):
    """`payrecon_relay_pending`, `payrecon_relay_oldest_pending_seconds` and
    `payrecon_relay_attempts_total{outcome}`, counted in the ledger at each scrape."""

    def __init__(self, engine: Engine, *, clock: Callable[[], dt.datetime] = utcnow) -> None:
        self._engine = engine
        self._clock = clock

    def __repr__(self) -> str:
        return "RelayCollector()"

    def describe(self) -> list[Metric]:
        # Names only: registering must not touch the database.
        return list(self._families())

    def collect(self) -> Iterator[Metric]:
        try:
            with read_session(self._engine) as session:
                figures = relay_figures(session, now=self._clock())
        except (SQLAlchemyError, DatabaseUnavailableError) as exc:
            # A scrape while the database is down still shows the receiver's own metrics; the
            # relay's are absent for that scrape rather than wrong.
            logger.warning("relay metrics unavailable", error=type(exc).__name__)
            return
        pending, oldest, attempts = self._families()
        pending.add_metric([], figures.pending)
        oldest.add_metric([], figures.oldest_pending_seconds)
        for outcome in AttemptOutcome:
            attempts.add_metric([outcome.value], figures.attempts.get(outcome.value, 0))
        yield from (pending, oldest, attempts)

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily, CounterMetricFamily]:
        return (
            GaugeMetricFamily(
                "payrecon_relay_pending",
                "Deliveries of events to endpoints not yet delivered nor failed for good.",
            ),
            GaugeMetricFamily(
                "payrecon_relay_oldest_pending_seconds",
                "Age of the oldest pending delivery (0 when none is pending).",
            ),
            CounterMetricFamily(
                "payrecon_relay_attempts",
                "Delivery attempts recorded, by outcome (delivered, retry, failed).",
                labels=["outcome"],
            ),
        )


def register_relay_metrics(registry: CollectorRegistry, engine: Engine) -> RelayCollector:
    """Add the relay's collector to `registry` (the app's own, never the global one)."""
    collector = RelayCollector(engine)
    registry.register(collector)
    return collector


class WorkerMetrics:
    """A `relay run` process's own instruments: its attempts by endpoint and outcome, and their
    duration (the ledger's figures above cover every worker together)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.attempts = Counter(
            "payrecon_relay_worker_attempts",
            "Delivery attempts made by this worker, by endpoint id and outcome.",
            ["endpoint", "outcome"],
            registry=registry,
        )
        self.seconds = Histogram(
            "payrecon_relay_attempt_seconds",
            "Duration of one delivery attempt (request to answer or error).",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=registry,
        )

        # The counter's child per (endpoint, outcome): `labels()` looked it up for every
        # attempt, at twice the cost of counting.
        self._children: dict[tuple[int | None, str], Any] = {}

    def attempted(self, endpoint_id: int | None, outcome: str, duration_ms: float | None) -> None:
        """Count one recorded attempt."""
        child = self._children.get((endpoint_id, outcome))
        if child is None:
            child = self.attempts.labels(endpoint=str(endpoint_id), outcome=outcome)
            self._children[(endpoint_id, outcome)] = child
        child.inc()
        if duration_ms is not None:
            self.seconds.observe(duration_ms / 1000)
