"""The advice for finance beside each finding of a queue page (reconcile.advice.finance_advice).

The same advice the transfer and collection pages give (admin.console.pages): a transfer's
amount or fee mismatch is told from its figures (which source differs), every other finding
from its kind alone. One query by primary key for the page's transfers with such findings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.models import Finding, Transfer
from ledger.subjects import Subject
from ledger.types import FindingKind
from reconcile.advice import Figures, finance_advice

# The kinds whose advice depends on the transfer's figures (reconcile.advice.finance_advice).
_BY_FIGURES = (FindingKind.AMOUNT_MISMATCH.value, FindingKind.FEE_MISMATCH.value)


def queue_advice(session: Session, items: Sequence[dict[str, Any]]) -> dict[int, str]:
    """Finance's advice for each finding of `items` (queue records), by finding id."""
    wanted = [
        int(item["id"])
        for item in items
        if item["subject"] == Subject.TRANSFER.value and item["kind"] in _BY_FIGURES
    ]
    figures: dict[int, Figures] = {}
    if wanted:
        statement = (
            select(col(Finding.id), col(Finding.detail), Transfer)
            .join(Transfer, col(Transfer.id) == col(Finding.subject_id))
            # By primary key alone: `wanted` holds transfers' findings only, and a condition on
            # `subject` would let SQLite walk uq_finding_subject_kind over every transfer finding.
            .where(col(Finding.id).in_(wanted))
        )
        for finding_id, detail, row in session.execute(statement):
            figures[int(finding_id)] = Figures.of(row, detail)
    return {
        int(item["id"]): finance_advice(str(item["kind"]), figures.get(int(item["id"])))
        for item in items
    }
