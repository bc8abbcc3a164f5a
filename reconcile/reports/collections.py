"""The report's collections: totals by status, finding counts and open findings, in SQL."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlmodel import Session

from ledger.models import Collection, Finding
from reconcile.advice import what_to_do
from reconcile.reports.model import CollectionTotals, OpenFinding, StatusTotals
from reconcile.reports.period import Period
from reconcile.reports.sql import (
    C,
    F,
    as_int,
    collection_amount,
    collection_fee,
    finding_counts,
    flag,
    in_period,
)

_ON_COLLECTIONS = Finding.__table__.join(Collection.__table__, F.collection_id == C.id)  # type: ignore[attr-defined]


def collection_totals(session: Session, period: Period) -> CollectionTotals:
    """Collections created in the period, grouped by status (one GROUP BY)."""
    statement = (
        select(
            C.status,
            func.count(),
            func.sum(collection_amount()),
            func.sum(collection_fee()),
            func.sum(flag(C.confirmed.is_(False))),
        )
        .where(*in_period(period, C))
        .group_by(C.status)
    )
    by_status = {
        status: StatusTotals(
            as_int(count),
            as_int(amount),
            as_int(fee),
            0 if status == "pending" else as_int(unconfirmed),
        )
        for status, count, amount, fee, unconfirmed in session.execute(statement)
    }
    return CollectionTotals(by_status)


def collection_finding_counts(
    session: Session, period: Period
) -> tuple[dict[str, int], dict[str, int]]:
    """Open findings on the period's collections by kind, and how many are acknowledged."""
    return finding_counts(session, _ON_COLLECTIONS, in_period(period, C))


def open_collection_findings(
    session: Session, period: Period, *, limit: int | None = None
) -> list[OpenFinding]:
    """The unresolved findings on the period's collections, with advice: unacknowledged first,
    then oldest first; only the first `limit` when given."""
    statement = (
        select(
            F.id,
            F.kind,
            F.detail,
            C.reference,
            C.provider_reference,
            C.status,
            collection_amount(),
            F.opened_at,
            F.acknowledged_at,
            F.ack_note,
        )
        .select_from(_ON_COLLECTIONS)
        .where(F.resolved_at.is_(None), *in_period(period, C))
        .order_by(F.acknowledged_at.is_not(None), F.opened_at, F.id)
        .limit(limit)
    )
    return [
        OpenFinding(
            id=row[0],
            kind=row[1],
            detail=row[2],
            reference=row[3],
            provider_reference=row[4],
            status=row[5],
            amount=as_int(row[6]),
            opened_at=row[7],
            acknowledged_at=row[8],
            ack_note=row[9],
            what_to_do=what_to_do(row[1]),
            subject="collection",
        )
        for row in session.execute(statement)
    ]
