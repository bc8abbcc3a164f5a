"""The report computed by aggregation in the database: a few GROUP BY queries, never a full load."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, select
from sqlmodel import Session

from ledger.events.types import Subject
from ledger.models import Transfer
from ledger.types import FindingKind, TransferStatus, utcnow
from reconcile.advice import Figures, finance_advice, what_to_do
from reconcile.checks import DEFAULT_STALE_AFTER
from reconcile.reports.collections import (
    collection_finding_counts,
    collection_totals,
    open_collection_findings,
)
from reconcile.reports.model import (
    DayLine,
    OpenFinding,
    Report,
    StalePending,
    StatusTotals,
    fill_days,
)
from reconcile.reports.open_findings import findings_on, open_findings
from reconcile.reports.period import Period
from reconcile.reports.sql import (
    FIGURE_COLUMNS,
    F,
    T,
    as_int,
    counted_amount,
    counted_fee,
    dialect_of,
    finding_counts,
    flag,
    in_period,
    lagos_date,
)

_SUCCESSFUL = TransferStatus.SUCCESSFUL.value
_FAILED = TransferStatus.FAILED.value
_PENDING = TransferStatus.PENDING.value
_REVERSED = TransferStatus.REVERSED.value


def compute_report(
    session: Session,
    period: Period | None = None,
    *,
    stale_after: int = DEFAULT_STALE_AFTER,
    now: dt.datetime | None = None,
    limit: int | None = None,
) -> Report:
    """The report for `period` (None: the whole ledger), aggregated by the database.

    `limit` bounds the two lists (`open_findings`, `stale_pending`) to their first entries,
    for answers that must stay small (`/api/reports/summary`, `/reports`); their counts stay
    whole. None (report files: the full export) lists everything."""
    period = period or Period()
    now = now or utcnow()
    totals, sources, days = _totals_and_days(session, period)
    opened, acknowledged = _finding_counts(session, period)
    # Findings on collections count beside the transfers' (a finding belongs to either).
    for counts, more in zip(
        (opened, acknowledged), collection_finding_counts(session, period), strict=True
    ):
        for kind, count in more.items():
            counts[kind] = counts.get(kind, 0) + count
    findings = _open_findings(session, period, limit) + open_collection_findings(
        session, period, limit=limit
    )
    # Unacknowledged first: those still need someone; then oldest first. Each query gave its
    # first `limit` in this order, so the merged first `limit` are among them.
    findings.sort(key=lambda f: (f.acknowledged_at is not None, f.opened_at, f.id))
    cutoff = now - dt.timedelta(seconds=stale_after)
    stale = _stale_pending(session, period, cutoff, limit)
    return Report(
        period=period,
        by_status=totals,
        figures_from=sources,
        findings_open=opened,
        findings_acknowledged=acknowledged,
        open_findings=findings[:limit],
        stale_pending=stale,
        stale_pending_count=(
            len(stale)
            if limit is None or len(stale) < limit
            else _stale_pending_count(session, period, cutoff)
        ),
        list_limit=limit,
        days=days,
        stale_after=stale_after,
        collections=collection_totals(session, period),
    )


def build_summary(
    session: Session,
    period: Period | None = None,
    *,
    stale_after: int = DEFAULT_STALE_AFTER,
    now: dt.datetime | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """The JSON summary (`report --format json`, `/api/reports/summary`) as a dict; `limit` as
    for `compute_report`."""
    return compute_report(session, period, stale_after=stale_after, now=now, limit=limit).as_dict()


@dataclass
class _Bucket:
    count: int = 0
    amount: int = 0
    fee: int = 0
    unconfirmed: int = 0


def _totals_and_days(
    session: Session, period: Period
) -> tuple[dict[str, StatusTotals], dict[str, int], list[DayLine]]:
    # One pass over the period's transfers grouped by (Lagos day, status): the ledger is read
    # once, and the few hundred groups are folded into status totals and day lines here.
    day = lagos_date(dialect_of(session))
    statement = (
        select(
            day,
            T.status,
            func.count(),
            func.sum(counted_amount()),
            func.sum(counted_fee()),
            func.sum(flag(T.confirmed.is_(False))),
            func.sum(flag(T.provider_amount.is_not(None))),
            func.sum(flag(and_(T.provider_amount.is_(None), T.webhook_amount.is_not(None)))),
        )
        .where(*in_period(period))
        .group_by(day, T.status)
    )
    statuses: dict[str, _Bucket] = {}
    days: dict[dt.date, DayLine] = {}
    sources = {"provider": 0, "webhook": 0, "expected": 0}
    for value, status, *sums in session.execute(statement):
        count, amount, fee, unconfirmed, provider, webhook = (as_int(v) for v in sums)
        bucket = statuses.setdefault(status, _Bucket())
        bucket.count += count
        bucket.amount += amount
        bucket.fee += fee
        # A pending transfer has no outcome to confirm; only outcomes count as unconfirmed.
        bucket.unconfirmed += 0 if status == _PENDING else unconfirmed
        sources["provider"] += provider
        sources["webhook"] += webhook
        sources["expected"] += count - provider - webhook
        date = value if isinstance(value, dt.date) else dt.date.fromisoformat(value)
        days[date] = _add_to_day(days.get(date, DayLine(date)), status, count, amount, fee)
    totals = {
        name: StatusTotals(b.count, b.amount, b.fee, b.unconfirmed) for name, b in statuses.items()
    }
    return totals, sources, fill_days(days.values())


def _add_to_day(line: DayLine, status: str, count: int, amount: int, fee: int) -> DayLine:
    # Day figures (docs/rules.md): every transfer counts, amounts of successful ones only, fees
    # charged on successful, failed and reversed ones (docs/rules.md: Reversals), and the number
    # of failures.
    return DayLine(
        date=line.date,
        count=line.count + count,
        amount=line.amount + (amount if status == _SUCCESSFUL else 0),
        fee=line.fee + (fee if status in (_SUCCESSFUL, _FAILED, _REVERSED) else 0),
        failed=line.failed + (count if status == _FAILED else 0),
    )


def _finding_counts(session: Session, period: Period) -> tuple[dict[str, int], dict[str, int]]:
    return finding_counts(session, findings_on(Subject.TRANSFER), in_period(period))


def _open_findings(session: Session, period: Period, limit: int | None) -> list[OpenFinding]:
    return open_findings(
        session,
        Subject.TRANSFER,
        amount=counted_amount(),
        where=in_period(period),
        # Which source differs decides the advice for amount and fee findings.
        extra=FIGURE_COLUMNS,
        figures_of=lambda row: Figures.of(row, row.detail),
        limit=limit,
    )


def _stale_conditions(period: Period, cutoff: dt.datetime) -> list[Any]:
    # The (status, created_at) index answers this without scanning settled transfers.
    return [T.status == _PENDING, T.created_at < cutoff, *in_period(period)]


def _stale_pending_count(session: Session, period: Period, cutoff: dt.datetime) -> int:
    statement = select(func.count()).select_from(Transfer.__table__)  # type: ignore[attr-defined]
    return as_int(session.execute(statement.where(*_stale_conditions(period, cutoff))).scalar())


def _stale_pending(
    session: Session, period: Period, cutoff: dt.datetime, limit: int | None
) -> list[StalePending]:
    # The transfers first, then their open stale_pending findings by id: an outer join let
    # PostgreSQL's planner, before its statistics knew the tables' size, loop over every
    # finding for every transfer (minutes at 100,000 of each).
    statement = (
        select(T.id, T.reference, T.provider_reference, T.amount, T.fee, T.created_at)
        .where(*_stale_conditions(period, cutoff))
        .order_by(T.created_at, T.id)
        .limit(limit)
    )
    transfers = session.execute(statement).all()
    ids = [row.id for row in transfers]
    flagged = _open_stale_findings(session, ids, every=limit is None) if ids else {}
    advice = what_to_do(FindingKind.STALE_PENDING)
    plain = finance_advice(FindingKind.STALE_PENDING)
    return [
        StalePending(
            reference=row.reference,
            provider_reference=row.provider_reference,
            amount=row.amount,
            fee=row.fee,
            created_at=row.created_at,
            finding_id=flagged[row.id][0] if row.id in flagged else None,
            acknowledged=row.id in flagged and flagged[row.id][1],
            what_to_do=advice,
            advice=plain,
        )
        for row in transfers
    ]


def _open_stale_findings(
    session: Session, transfer_ids: list[int], *, every: bool
) -> dict[int, tuple[int, bool]]:
    """transfer id → (its open stale_pending finding's id, acknowledged?) for `transfer_ids`;
    with `every` (the whole list is wanted) all open stale_pending findings in one query."""
    statement = select(F.subject_id, F.id, F.acknowledged_at).where(
        F.subject == Subject.TRANSFER.value,
        F.kind == FindingKind.STALE_PENDING.value,
        F.resolved_at.is_(None),
    )
    if not every:
        statement = statement.where(F.subject_id.in_(transfer_ids))
    return {
        transfer_id: (finding_id, acknowledged_at is not None)
        for transfer_id, finding_id, acknowledged_at in session.execute(statement)
        if transfer_id is not None
    }
