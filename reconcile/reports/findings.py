"""Listing findings with their transfer's (or collection's) references (for `payrecon findings
list`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session

from ledger.events.types import Subject
from ledger.models import Collection, Finding, StatementLine, Transfer
from ledger.subjects import about, reference_column
from reconcile.advice import Figures, what_to_do
from reconcile.reports.model import iso
from reconcile.reports.sql import FIGURE_COLUMNS, C, T

F = Finding.__table__.c  # type: ignore[attr-defined]


def list_findings(
    session: Session, *, open_only: bool = False, kind: str | None = None
) -> list[dict[str, Any]]:
    """Findings oldest first, as the API shows them plus their subject (`transfer`,
    `collection` or `statement_line`) and its references (a line's is its id). A collection
    has no transfer figures: its advice is the kind's own."""
    findings = Finding.__table__  # type: ignore[attr-defined]
    transfers = Transfer.__table__  # type: ignore[attr-defined]
    collections = Collection.__table__  # type: ignore[attr-defined]
    lines = StatementLine.__table__  # type: ignore[attr-defined]
    subjects = (
        findings.outerjoin(transfers, about(F, Subject.TRANSFER, T.id))
        .outerjoin(collections, about(F, Subject.COLLECTION, C.id))
        .outerjoin(lines, about(F, Subject.STATEMENT_LINE, lines.c.id))
    )
    statement = (
        select(
            F.id,
            F.kind,
            F.detail,
            F.opened_at,
            F.resolved_at,
            F.acknowledged_at,
            F.ack_note,
            func.coalesce(
                T.reference, C.reference, reference_column(Subject.STATEMENT_LINE, lines.c)
            ).label("reference"),
            func.coalesce(
                T.provider_reference, C.provider_reference, func.nullif(lines.c.reference, "")
            ).label("provider_reference"),
            F.subject,
            *FIGURE_COLUMNS,
        )
        .select_from(subjects)
        .order_by(F.opened_at, F.id)
    )
    if open_only:
        statement = statement.where(F.resolved_at.is_(None))
    if kind is not None:
        statement = statement.where(F.kind == kind)
    return [
        {
            "id": row.id,
            "subject": row.subject,
            "kind": row.kind,
            "detail": row.detail,
            "opened_at": iso(row.opened_at),
            "resolved_at": iso(row.resolved_at),
            "acknowledged_at": iso(row.acknowledged_at),
            "ack_note": row.ack_note,
            "reference": row.reference,
            "provider_reference": row.provider_reference,
            "what_to_do": what_to_do(row.kind, Figures.of(row, row.detail)),
        }
        for row in session.execute(statement)
    ]
