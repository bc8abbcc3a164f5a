"""The reconciler process's own instruments: passes, their duration and what they found
(docs/rules.md: Observability). The ledger's gauges (due work, last pass) are telemetry.gauges'."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram

from ledger.types import FindingKind
from reconcile.pass_summary import PassSummary


@dataclass(frozen=True)
class ReconcilerMetrics:
    """Counters and a histogram of the passes this process ran."""

    passes: Counter
    pass_seconds: Histogram
    checked: Counter
    findings_raised: Counter

    def passed(self, summary: PassSummary, seconds: float) -> None:
        """Count one finished pass."""
        self.passes.labels(outcome=summary.stopped or "completed").inc()
        self.pass_seconds.observe(seconds)
        self.checked.labels(subject="transfer").inc(summary.checked)
        self.checked.labels(subject="collection").inc(summary.collections.checked)
        for kind, count in summary.raised_by_kind.items():
            self.findings_raised.labels(kind=kind).inc(count)

    def failed(self, error: BaseException) -> None:
        """Count a pass that raised (a refused key, the ledger down, another runner…)."""
        self.passes.labels(outcome=type(error).__name__).inc()


def create_reconciler_metrics(registry: CollectorRegistry) -> ReconcilerMetrics:
    """The reconciler's instruments, on `registry`; every label a pass can use shows from the
    start at 0, so a rate over it is defined before the first finding."""
    metrics = ReconcilerMetrics(
        passes=Counter(
            "payrecon_reconcile_passes",
            "Reconcile passes run by this process, by outcome (completed, or what stopped it).",
            ["outcome"],
            registry=registry,
        ),
        pass_seconds=Histogram(
            "payrecon_reconcile_pass_seconds",
            "Duration of one reconcile pass.",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
            registry=registry,
        ),
        checked=Counter(
            "payrecon_reconcile_checked",
            "Provider lookups recorded by this process's passes, by subject.",
            ["subject"],
            registry=registry,
        ),
        findings_raised=Counter(
            "payrecon_reconcile_findings_raised",
            "Findings opened by this process's passes, by kind.",
            ["kind"],
            registry=registry,
        ),
    )
    for kind in FindingKind:
        metrics.findings_raised.labels(kind=kind.value)
    for subject in ("transfer", "collection"):
        metrics.checked.labels(subject=subject)
    return metrics
