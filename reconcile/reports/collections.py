"""The report's collections: totals by status, finding counts and open findings, in SQL."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlmodel import Session

from ledger.events.types import Subject
from reconcile.reports.model import CollectionTotals, OpenFinding, StatusTotals
from reconcile.reports.open_findings import findings_on, open_findings
from reconcile.reports.period import Period
from reconcile.reports.sql import (
    C,
    as_int,
    collection_amount,
    collection_fee,
    finding_counts,
    flag,
    in_period,
)

_ON_COLLECTIONS = findings_on(Subject.COLLECTION)


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
    return open_findings(
        session,
        Subject.COLLECTION,
        amount=collection_amount(),
        where=in_period(period, C),
        limit=limit,
    )
