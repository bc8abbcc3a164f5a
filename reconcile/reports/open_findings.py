"""The report's open findings of one book, with their subject and advice: one query a book."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Join, select
from sqlmodel import Session

from ledger.events.types import Subject
from ledger.models import Finding
from ledger.subjects import BOOK_MODELS, about
from reconcile.advice import Figures, finance_advice, what_to_do
from reconcile.reports.model import OpenFinding
from reconcile.reports.sql import F, as_int


def findings_on(subject: Subject) -> Join:
    """`finding` joined to the table of `subject` (on the `(subject, subject_id)` index)."""
    table = BOOK_MODELS[subject].__table__  # type: ignore[union-attr]
    return Finding.__table__.join(table, about(F, subject, table.c.id))  # type: ignore[attr-defined,no-any-return]


def open_findings(
    session: Session,
    subject: Subject,
    *,
    amount: Any,
    where: Sequence[Any],
    figures_of: Callable[[Any], Figures | None] = lambda row: None,
    extra: Sequence[Any] = (),
    limit: int | None = None,
) -> list[OpenFinding]:
    """The unresolved findings on the subject's rows matching `where`: unacknowledged first
    (those still need someone), then oldest first; only the first `limit` when given.

    `amount` is the subject's money column, `extra` more columns `figures_of` reads from a row
    (the figures its advice depends on: which source differs).
    """
    table = BOOK_MODELS[subject].__table__  # type: ignore[union-attr]
    statement = (
        select(
            F.id,
            F.kind,
            F.detail,
            table.c.reference,
            table.c.provider_reference,
            table.c.status,
            amount,
            F.opened_at,
            F.acknowledged_at,
            F.ack_note,
            *extra,
        )
        .select_from(findings_on(subject))
        .where(F.resolved_at.is_(None), *where)
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
            what_to_do=what_to_do(row[1], figures),
            advice=finance_advice(row[1], figures),
            subject=subject.value,
        )
        for row in session.execute(statement)
        for figures in (figures_of(row),)
    ]
