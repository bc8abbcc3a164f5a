"""Gauges read from the ledger at each scrape, on every process's `/metrics` (docs/rules.md:
Observability; docs/operations.md, "Monitoring").

Each gauge is one function `(session, now) -> metric families` listed in `LEDGER_GAUGES`; each
query is answered from an index (bench/bench_scrape.py: a scrape of 1,000,000 transfers). A
gauge whose query fails is left out of that scrape and counted in
`payrecon_scrape_errors_total{collector}`, and `payrecon_ledger_up` says whether the ledger
answered at all: a scrape while the database is down still answers.

To add a gauge: write its function here, add it to `LEDGER_GAUGES`, and name its metrics in
the dashboard or rules as needed (tests/integration/telemetry/test_exported_names.py checks
every name they use against a real `/metrics`).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import structlog
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import Engine, func, select
from sqlmodel import Session, col

from ledger.db import read_session
from ledger.events.types import DeliveryStatus
from ledger.lease import last_pass_at
from ledger.models import (
    Collection,
    Finding,
    RelayDelivery,
    RelayEndpoint,
    StatementAccount,
    StatementLine,
    Transfer,
)
from ledger.types import FindingKind, TransferStatus, utcnow

logger = structlog.get_logger(__name__)

Read = Callable[[Session, dt.datetime], Iterable[Metric]]


@dataclass(frozen=True)
class LedgerGauge:
    """A few figures read together from the ledger; `name` labels its scrape errors."""

    name: str
    read: Read


def _seconds(now: dt.datetime, then: dt.datetime | None) -> float:
    return 0.0 if then is None else max(0.0, (now - then).total_seconds())


def findings_open(session: Session, now: dt.datetime) -> Iterable[Metric]:
    """Open findings by kind (every kind shown, 0 when none) and the age of each kind's oldest."""
    count = GaugeMetricFamily(
        "payrecon_findings_open", "Findings not resolved, by kind.", labels=["kind"]
    )
    age = GaugeMetricFamily(
        "payrecon_findings_oldest_open_seconds",
        "Age of the oldest unresolved finding of each kind (0 when none).",
        labels=["kind"],
    )
    rows = session.execute(
        select(col(Finding.kind), func.count(), func.min(col(Finding.opened_at)))
        .where(col(Finding.resolved_at).is_(None))
        .group_by(col(Finding.kind))
    ).all()
    found = {str(kind): (int(n), oldest) for kind, n, oldest in rows}
    for kind in sorted({k.value for k in FindingKind} | set(found)):
        n, oldest = found.get(kind, (0, None))
        count.add_metric([kind], n)
        age.add_metric([kind], _seconds(now, oldest))
    return (count, age)


def pending_transfers(session: Session, now: dt.datetime) -> Iterable[Metric]:
    """The age of the oldest transfer still pending (ix_transfer_status_created: one seek)."""
    oldest = session.execute(
        select(func.min(col(Transfer.created_at))).where(
            col(Transfer.status) == TransferStatus.PENDING.value
        )
    ).scalar_one_or_none()
    gauge = GaugeMetricFamily(
        "payrecon_transfers_pending_oldest_seconds",
        "Age of the oldest transfer whose status is still pending (0 when none).",
    )
    gauge.add_metric([], _seconds(now, oldest))
    return (gauge,)


def reconcile_due(session: Session, now: dt.datetime) -> Iterable[Metric]:
    """Rows whose next check is due now, by subject (ix_transfer_due, ix_collection_due)."""
    gauge = GaugeMetricFamily(
        "payrecon_reconcile_due",
        "Transfers and collections whose next provider check is due now, by subject.",
        labels=["subject"],
    )
    for subject, model in (("transfer", Transfer), ("collection", Collection)):
        due = session.execute(
            select(func.count()).select_from(model).where(col(model.next_check_at) <= now)
        ).scalar_one()
        gauge.add_metric([subject], int(due))
    return (gauge,)


def reconcile_last_pass(session: Session, now: dt.datetime) -> Iterable[Metric]:
    """When the last reconcile pass of any reconciler ended (ledger.lease.LAST_PASS)."""
    del now
    finished = last_pass_at(session)
    gauge = GaugeMetricFamily(
        "payrecon_reconcile_last_pass_timestamp_seconds",
        "Unix time the last reconcile pass ended, whichever reconciler ran it (0 before the "
        "first).",
    )
    gauge.add_metric([], 0.0 if finished is None else finished.timestamp())
    return (gauge,)


def relay_endpoints(session: Session, now: dt.datetime) -> Iterable[Metric]:
    """Per endpoint (not removed): whether it is disabled, and its pending deliveries."""
    disabled = GaugeMetricFamily(
        "payrecon_relay_endpoint_disabled",
        "1 when the endpoint is disabled (by an operator or after failing for too long).",
        labels=["endpoint"],
    )
    pending = GaugeMetricFamily(
        "payrecon_relay_endpoint_pending",
        "Deliveries to the endpoint not yet delivered nor failed for good.",
        labels=["endpoint"],
    )
    endpoints = session.execute(
        select(col(RelayEndpoint.id), col(RelayEndpoint.enabled)).where(
            col(RelayEndpoint.removed_at).is_(None)
        )
    ).all()
    counts = dict(
        session.execute(
            select(col(RelayDelivery.endpoint_id), func.count())
            .where(col(RelayDelivery.status) == DeliveryStatus.PENDING.value)
            .group_by(col(RelayDelivery.endpoint_id))
        ).all()
    )
    for endpoint_id, enabled in endpoints:
        disabled.add_metric([str(endpoint_id)], 0 if enabled else 1)
        pending.add_metric([str(endpoint_id)], int(counts.get(endpoint_id, 0)))
    return (disabled, pending)


# Lagos is UTC+1 all year: a statement's day starts at 23:00 UTC the day before.
_LAGOS = dt.timezone(dt.timedelta(hours=1))


def statements(session: Session, now: dt.datetime) -> Iterable[Metric]:
    """Per statement account: its unmatched lines, and the day of its latest line as a Unix
    time (the start of that Lagos day; 0 before the first import) — two seeks a account
    on ix_statement_line_account_state_date and ix_statement_line_account_date."""
    del now
    unmatched = GaugeMetricFamily(
        "payrecon_statement_unmatched_lines",
        "Statement lines matched to nothing and not explained (state unmatched), by account.",
        labels=["account"],
    )
    last_line = GaugeMetricFamily(
        "payrecon_statement_last_line_timestamp_seconds",
        "Unix time of the start (Lagos) of the day of the account's latest statement line.",
        labels=["account"],
    )
    accounts = session.execute(select(col(StatementAccount.id), col(StatementAccount.name))).all()
    for account_id, name in accounts:
        count = session.execute(
            select(func.count())
            .select_from(StatementLine)
            .where(
                col(StatementLine.account_id) == account_id,
                col(StatementLine.state) == "unmatched",
            )
        ).scalar_one()
        latest = session.execute(
            select(func.max(col(StatementLine.date))).where(
                col(StatementLine.account_id) == account_id
            )
        ).scalar_one_or_none()
        unmatched.add_metric([name], int(count))
        if isinstance(latest, str):  # SQLite's max() of a date column is its text
            latest = dt.date.fromisoformat(latest)
        start = (
            0.0
            if latest is None
            else dt.datetime.combine(latest, dt.time(), tzinfo=_LAGOS).timestamp()
        )
        last_line.add_metric([name], start)
    return (unmatched, last_line)


LEDGER_GAUGES: tuple[LedgerGauge, ...] = (
    LedgerGauge("findings", findings_open),
    LedgerGauge("transfers", pending_transfers),
    LedgerGauge("reconcile_due", reconcile_due),
    LedgerGauge("reconcile_last_pass", reconcile_last_pass),
    LedgerGauge("relay_endpoints", relay_endpoints),
    LedgerGauge("statements", statements),
)


class LedgerGauges(Collector):
    """The `LEDGER_GAUGES`, read at each scrape, with their error counter and `up` gauge."""

    def __init__(
        self,
        engine: Engine,
        *,
        gauges: tuple[LedgerGauge, ...] = LEDGER_GAUGES,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self._engine = engine
        self._gauges = gauges
        self._clock = clock
        self._errors = dict.fromkeys((gauge.name for gauge in gauges), 0)
        self._lock = threading.Lock()  # scrapes may overlap (one thread each)

    def __repr__(self) -> str:
        return "LedgerGauges()"

    def describe(self) -> list[Metric]:
        # Registering must not touch the database: the names are known at each scrape only.
        return []

    def collect(self) -> Iterator[Metric]:
        now = self._clock()
        answered = False
        for index, gauge in enumerate(self._gauges):
            try:
                # A session each: a failed query must not abort its neighbours' transaction.
                with read_session(self._engine) as session:
                    families = list(gauge.read(session, now))
            except Exception as exc:  # a scrape answers whatever fails (docstring)
                # Before any answer, the ledger is taken as down: the other gauges are not
                # tried, so a scrape waits for at most one connection timeout.
                failed = [gauge] if answered else list(self._gauges[index:])
                with self._lock:
                    for each in failed:
                        self._errors[each.name] += 1
                logger.warning(
                    "ledger gauge unavailable", gauge=gauge.name, error=type(exc).__name__
                )
                if not answered:
                    break
                continue
            answered = True
            yield from families
        up = GaugeMetricFamily(
            "payrecon_ledger_up", "1 when the ledger answered this scrape's queries, else 0."
        )
        up.add_metric([], 1 if answered else 0)
        errors = CounterMetricFamily(
            "payrecon_scrape_errors",
            "Ledger reads that failed during a scrape, by collector.",
            labels=["collector"],
        )
        with self._lock:
            for name, count in self._errors.items():
                errors.add_metric([name], count)
        yield from (up, errors)


def register_ledger_gauges(registry: CollectorRegistry, engine: Engine) -> LedgerGauges:
    """Add the ledger's gauges to `registry` (a process's own, never the global one)."""
    collector = LedgerGauges(engine)
    registry.register(collector)
    return collector
