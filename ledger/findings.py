"""Raising, resolving and acknowledging findings; one row per (subject, kind).

A finding's subject is a transfer or a collection (`ledger.subjects`), named by the pair
(`subject`, `subject_id`) as relay events name theirs; everything else is the same for all.

Every caller outside the ledger goes through `ledger.events.findings`, which wraps these and writes
each change's relay event in the same transaction (tests/unit/test_dependencies.py checks it).
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Iterable

from sqlalchemy import insert, select, update
from sqlmodel import Session

from ledger.errors import NoteError
from ledger.events.types import Subject
from ledger.models import Finding, FindingNote
from ledger.subjects import about
from ledger.types import FindingKind, FindingState, takes_text
from ledger.upsert import insert_ignore, insert_ignore_many

_TABLE = Finding.__table__  # type: ignore[attr-defined]


def raise_finding(
    session: Session,
    *,
    subject: Subject,
    subject_id: int,
    kind: FindingKind,
    detail: str,
    now: dt.datetime,
) -> Finding | None:
    """Open a finding; return it when newly opened (or reopened), None when already open."""
    new_id = insert_ignore(
        session,
        _TABLE,
        {
            "subject": subject.value,
            "subject_id": subject_id,
            "kind": kind.value,
            "detail": detail,
            "opened_at": now,
            "updated_at": now,
        },
        ["subject", "subject_id", "kind"],
    )
    finding: Finding = session.execute(
        select(Finding)
        .where(about(_TABLE.c, subject, subject_id), _TABLE.c.kind == kind.value)
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


def open_new_findings(
    session: Session,
    *,
    subject: Subject,
    kind: FindingKind,
    details: dict[int, str],
    now: dt.datetime,
) -> dict[int, int]:
    """Open `kind` on each subject id of `details` (its detail) that has no finding of that
    kind at all, in a few statements for thousands; {subject id: finding id} of those opened.
    A subject that already has one (open, or resolved and to be reopened) is left out:
    `raise_finding` decides about it."""
    rows = [
        {
            "subject": subject.value,
            "subject_id": subject_id,
            "kind": kind.value,
            "detail": detail,
            "opened_at": now,
            "updated_at": now,
        }
        for subject_id, detail in sorted(details.items())
    ]
    made = insert_ignore_many(
        session, _TABLE, rows, ["subject", "subject_id", "kind"], ["subject_id", "id"]
    )
    return {int(subject_id): int(finding_id) for subject_id, finding_id in made}


def resolve_finding(
    session: Session,
    *,
    subject: Subject,
    subject_id: int,
    kind: FindingKind,
    now: dt.datetime,
) -> Finding | None:
    """Close an open finding of `kind` on the subject; the finding when one was open."""
    finding: Finding | None = session.execute(
        select(Finding)
        .where(
            about(_TABLE.c, subject, subject_id),
            _TABLE.c.kind == kind.value,
            _TABLE.c.resolved_at.is_(None),
        )
        .with_for_update()
    ).scalar_one_or_none()
    if finding is None:
        return None
    finding.resolved_at = now
    finding.updated_at = now
    return finding


def open_kinds_by_subject(
    session: Session, *, subject: Subject, ids: Iterable[int]
) -> dict[int, set[str]]:
    """The kinds of the open findings of each of the subjects `ids`: one query for a chunk,
    so resolving costs nothing when none is open."""
    found: dict[int, set[str]] = {}
    for subject_id, kind in session.execute(
        select(_TABLE.c.subject_id, _TABLE.c.kind).where(
            _TABLE.c.subject == subject.value,
            _TABLE.c.subject_id.in_(list(ids)),
            _TABLE.c.resolved_at.is_(None),
        )
    ):
        found.setdefault(int(subject_id), set()).add(str(kind))
    return found


MAX_NOTE_CHARS = 2000


# Line breaks and tabs belong in a note; every other control character is refused (it would
# hide text in a terminal or a page, or reorder it: U+202E and friends are format characters).
_ALLOWED_CONTROLS = frozenset("\n\t")


def _hidden_character(note: str) -> str | None:
    for char in note:
        if char in _ALLOWED_CONTROLS:
            continue
        if unicodedata.category(char) in {"Cc", "Cf"}:
            return f"U+{ord(char):04X}"
    return None


def check_note(note: str) -> str:
    """The note without surrounding blanks, CRLF as LF; NoteError when it is empty, over
    MAX_NOTE_CHARS, holds a NUL, an unpaired surrogate or another control character (line
    breaks and tabs are fine)."""
    note = note.replace("\r\n", "\n").strip()
    if not note:
        raise NoteError("a note is required")
    if len(note) > MAX_NOTE_CHARS:
        raise NoteError(f"the note is limited to {MAX_NOTE_CHARS} characters")
    if not takes_text(note):
        raise NoteError("the note holds a NUL or a character that is not valid Unicode")
    hidden = _hidden_character(note)
    if hidden is not None:
        raise NoteError(f"the note holds a control character ({hidden})")
    return note


def finding_state(finding: Finding) -> FindingState:
    """Resolved wins over acknowledged: a cause that went away needs no one's attention."""
    if finding.resolved_at is not None:
        return FindingState.RESOLVED
    if finding.acknowledged_at is not None:
        return FindingState.ACKNOWLEDGED
    return FindingState.OPEN


def add_note(
    session: Session, *, finding_id: int, author: str, note: str, now: dt.datetime
) -> FindingNote | None:
    """Append a note (checked by `check_note`) by `author`; None when there is no such finding."""
    note = check_note(note)
    finding = session.get(Finding, finding_id)
    if finding is None:
        return None
    row = FindingNote(finding_id=finding_id, author=author, body=note, created_at=now)
    session.add(row)
    finding.updated_at = now
    session.flush()
    return row


def assign_finding(
    session: Session, *, finding_id: int, assignee: str | None, now: dt.datetime
) -> Finding | None:
    """Give the finding to `assignee` (None: to nobody); None when there is no such finding.

    The caller checks that the name is an operator's.
    """
    finding = session.get(Finding, finding_id, with_for_update=True)
    if finding is None:
        return None
    finding.assignee = assignee
    finding.updated_at = now
    return finding


def acknowledge_finding(
    session: Session,
    *,
    finding_id: int,
    note: str,
    now: dt.datetime,
    author: str | None = None,
) -> Finding | None:
    """Mark a finding acknowledged with a note (checked by `check_note`); None when there is
    no such finding. With `author` the note is also kept among the finding's notes."""
    note = check_note(note)
    finding = session.get(Finding, finding_id)
    if finding is None:
        return None
    finding.acknowledged_at = now
    finding.ack_note = note
    finding.updated_at = now
    if author is not None:
        session.add(FindingNote(finding_id=finding_id, author=author, body=note, created_at=now))
    return finding


def acknowledge_rows(
    session: Session, finding_ids: list[int], *, note: str, now: dt.datetime, author: str
) -> None:
    """`acknowledge_finding` (with `author`) for many findings at once: two statements, the
    same rows. The caller has locked them and checked the note."""
    if not finding_ids:
        return
    table = Finding.__table__  # type: ignore[attr-defined]
    session.execute(
        update(table)
        .where(table.c.id.in_(finding_ids))
        .values(acknowledged_at=now, ack_note=note, updated_at=now)
    )
    session.execute(
        insert(FindingNote.__table__),  # type: ignore[attr-defined]
        [
            {"finding_id": finding_id, "author": author, "body": note, "created_at": now}
            for finding_id in finding_ids
        ],
    )


def assign_rows(
    session: Session, finding_ids: list[int], *, assignee: str | None, now: dt.datetime
) -> None:
    """`assign_finding` for many findings at once, in one statement; the caller has locked
    them and checked the name."""
    if finding_ids:
        table = Finding.__table__  # type: ignore[attr-defined]
        session.execute(
            update(table)
            .where(table.c.id.in_(finding_ids))
            .values(assignee=assignee, updated_at=now)
        )
