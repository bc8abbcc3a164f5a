"""Listing findings with their transfer's references (for `payrecon findings list`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from ledger.models import Finding, Transfer
from reconcile.advice import Figures, what_to_do
from reconcile.reports.model import iso
from reconcile.reports.sql import FIGURE_COLUMNS, T

F = Finding.__table__.c  # type: ignore[attr-defined]


def list_findings(
    session: Session, *, open_only: bool = False, kind: str | None = None
) -> list[dict[str, Any]]:
    """Findings oldest first, as the API shows them plus their transfer's references."""
    statement = (
        select(
            F.id,
            F.kind,
            F.detail,
            F.opened_at,
            F.resolved_at,
            F.acknowledged_at,
            F.ack_note,
            T.reference,
            T.provider_reference,
            *FIGURE_COLUMNS,
        )
        .select_from(Finding.__table__.join(Transfer.__table__, F.transfer_id == T.id))  # type: ignore[attr-defined]
        .order_by(F.opened_at, F.id)
    )
    if open_only:
        statement = statement.where(F.resolved_at.is_(None))
    if kind is not None:
        statement = statement.where(F.kind == kind)
    return [
        {
            "id": row.id,
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
