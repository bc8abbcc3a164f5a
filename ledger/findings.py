"""Raising, resolving and acknowledging findings; one row per (subject, kind).

A finding's subject is a transfer or a collection: exactly one of `transfer_id` and
`collection_id` is given (and set on the row); everything else is the same for both.

Every caller outside the ledger goes through `ledger.events.findings`, which wraps these and writes
each change's relay event in the same transaction (tests/unit/test_dependencies.py checks it).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from sqlalchemy import select
from sqlmodel import Session

from ledger.errors import NoteError
from ledger.models import Finding
from ledger.types import FindingKind, takes_text
from ledger.upsert import insert_ignore


def subject_column(transfer_id: int | None, collection_id: int | None) -> tuple[str, int]:
    """The finding column naming the subject, and its id; ValueError unless exactly one is
    given."""
    if (transfer_id is None) == (collection_id is None):
        raise ValueError("a finding belongs to exactly one transfer or collection")
    if transfer_id is not None:
        return "transfer_id", transfer_id
    assert collection_id is not None
    return "collection_id", collection_id


def raise_finding(
    session: Session,
    *,
    kind: FindingKind,
    detail: str,
    now: dt.datetime,
    transfer_id: int | None = None,
    collection_id: int | None = None,
) -> Finding | None:
    """Open a finding; return it when newly opened (or reopened), None when already open."""
    column, subject_id = subject_column(transfer_id, collection_id)
    table = Finding.__table__  # type: ignore[attr-defined]
    new_id = insert_ignore(
        session,
        table,
        {
            column: subject_id,
            "kind": kind.value,
            "detail": detail,
            "opened_at": now,
            "updated_at": now,
        },
        [column, "kind"],
    )
    finding: Finding = session.execute(
        select(Finding)
        .where(table.c[column] == subject_id, Finding.kind == kind.value)  # type: ignore[arg-type]
        .with_for_update()
    ).scalar_one()
    if new_id is not None:
        return finding
    if finding.resolved_at is None:
        if finding.detail != detail:
            finding.detail = detail
            finding.updated_at = now
        return None
    # The cause came back after it had gone: reopen the same finding. An acknowledgement was
    # about the old occurrence, so it is cleared and the recurrence alerts again.
    finding.resolved_at = None
    finding.acknowledged_at = None
    finding.ack_note = None
    finding.opened_at = now
    finding.detail = detail
    finding.updated_at = now
    return finding


def resolve_finding(
    session: Session,
    *,
    kind: FindingKind,
    now: dt.datetime,
    transfer_id: int | None = None,
    collection_id: int | None = None,
) -> Finding | None:
    """Close an open finding of `kind` on the subject; the finding when one was open."""
    column, subject_id = subject_column(transfer_id, collection_id)
    table = Finding.__table__  # type: ignore[attr-defined]
    finding: Finding | None = session.execute(
        select(Finding)
        .where(
            table.c[column] == subject_id,
            Finding.kind == kind.value,  # type: ignore[arg-type]
            Finding.resolved_at.is_(None),  # type: ignore[union-attr]
        )
        .with_for_update()
    ).scalar_one_or_none()
    if finding is None:
        return None
    finding.resolved_at = now
    finding.updated_at = now
    return finding


def open_kinds_by_subject(
    session: Session, *, column: str, ids: Iterable[int]
) -> dict[int, set[str]]:
    """The kinds of the open findings of each subject (`column` is `transfer_id` or
    `collection_id`): one query for a chunk, so resolving costs nothing when none is open."""
    table = Finding.__table__  # type: ignore[attr-defined]
    found: dict[int, set[str]] = {}
    for subject_id, kind in session.execute(
        select(table.c[column], table.c.kind).where(
            table.c[column].in_(list(ids)), table.c.resolved_at.is_(None)
        )
    ):
        found.setdefault(int(subject_id), set()).add(str(kind))
    return found


MAX_NOTE_CHARS = 2000


def check_note(note: str) -> str:
    """The note without surrounding blanks; NoteError when it is empty, over MAX_NOTE_CHARS,
    or holds a NUL or an unpaired surrogate (line breaks and tabs are fine)."""
    note = note.strip()
    if not note:
        raise NoteError("a note is required to acknowledge a finding")
    if len(note) > MAX_NOTE_CHARS:
        raise NoteError(f"the note is limited to {MAX_NOTE_CHARS} characters")
    if not takes_text(note):
        raise NoteError("the note holds a NUL or a character that is not valid Unicode")
    return note


def acknowledge_finding(
    session: Session, *, finding_id: int, note: str, now: dt.datetime
) -> Finding | None:
    """Mark a finding acknowledged with a note (checked by `check_note`); None when there is
    no such finding."""
    note = check_note(note)
    finding = session.get(Finding, finding_id)
    if finding is None:
        return None
    finding.acknowledged_at = now
    finding.ack_note = note
    finding.updated_at = now
    return finding
