"""A finding as every surface shows it: the transfer and collection records, the findings queue
(`/api/findings`, the console). One function, so the keys cannot drift apart between them.

The keys the relay's `finding.*` events carry (docs/rules.md: Relay) come from the same function
as those events (`ledger.events.payloads.finding_fields`); the record adds the operator's view:
`state`, `assignee`, `ack_note`, the subject's `provider_reference` and `amount` (counted by
the one figure rule, `ledger.figures`), the finding's `amount_at_stake`, and `notes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.events.payloads import finding_fields, iso
from ledger.events.types import Subject
from ledger.figures import amount_at_stake, counted_amount
from ledger.findings import finding_state
from ledger.models import Collection, Finding, FindingNote, StatementLine, Transfer
from ledger.subjects import about, subject_of


def note_dict(note: FindingNote) -> dict[str, Any]:
    """A note as the API shows it."""
    return {"author": note.author, "at": iso(note.created_at), "note": note.body}


def notes_of(session: Session, finding_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """The notes of each finding, oldest first (one query for all of them)."""
    notes: dict[int, list[dict[str, Any]]] = {fid: [] for fid in finding_ids}
    if finding_ids:
        statement = (
            select(FindingNote)
            .where(col(FindingNote.finding_id).in_(list(finding_ids)))
            .order_by(col(FindingNote.finding_id), col(FindingNote.id))
        )
        for note in session.execute(statement).scalars():
            notes[note.finding_id].append(note_dict(note))
    return notes


Owner = Transfer | Collection | StatementLine


def finding_record(finding: Finding, owner: Owner, notes: list[dict[str, Any]]) -> dict[str, Any]:
    """A finding with its state, assignee, notes and the transfer, collection or statement
    line it is about (amounts in kobo): the one shape of a finding in every answer. A
    statement line's reference is its id, its `provider_reference` the statement's reference
    and its amount the line's."""
    assert finding.id is not None
    if isinstance(owner, StatementLine):
        reference, provider_reference = str(owner.id), owner.reference or None
        amount = at_stake = owner.amount
    else:
        reference, provider_reference = owner.reference, owner.provider_reference
        # Counted by the one figure rule (ledger.figures), as the overview and reports count.
        amount, at_stake = counted_amount(owner), amount_at_stake(finding.kind, owner)
    shared = finding_fields(
        id=finding.id,
        kind=finding.kind,
        subject=Subject(finding.subject),
        reference=reference,
        detail=finding.detail,
        opened_at=finding.opened_at,
        resolved_at=finding.resolved_at,
        acknowledged_at=finding.acknowledged_at,
    )
    return {
        **shared,
        "state": finding_state(finding).value,
        "assignee": finding.assignee,
        "ack_note": finding.ack_note,
        "provider_reference": provider_reference,
        "amount": amount,
        "amount_at_stake": at_stake,
        "notes": notes,
    }


def findings_of(session: Session, owner: Owner) -> list[dict[str, Any]]:
    """Every finding of one subject, oldest first, as `finding_record` shows it."""
    subject = subject_of(owner)
    findings = list(
        session.execute(
            select(Finding)
            .where(about(Finding.__table__.c, subject.subject, subject.id))  # type: ignore[attr-defined]
            .order_by(col(Finding.id))
        )
        .scalars()
        .all()
    )
    notes = notes_of(session, [int(f.id) for f in findings if f.id is not None])
    return [finding_record(f, owner, notes[int(f.id or 0)]) for f in findings]
