"""Working findings: acknowledge one or many, assign, note (docs/rules.md: Console, operators and
audit). Every caller (API, console, reports page, CLI) goes through these."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from sqlmodel import Session

from admin.actions.actor import Actor, audit
from admin.errors import InvalidError, MissingFindingsError, UnknownOperatorError
from admin.operator_names import is_operator
from ledger.audit import AuditAction
from ledger.errors import NoteError
from ledger.events.findings import acknowledge_finding
from ledger.findings import add_note, assign_finding, check_note
from ledger.models import Finding, FindingNote

# Several findings acknowledged at once, in one transaction: enough for a day's queue, small
# enough that one request cannot hold the table for long.
MAX_BULK_ACK = 200


def checked_note(text: object) -> str:
    """The note, stripped and checked; InvalidError on `note` when it cannot be kept."""
    if not isinstance(text, str):
        raise InvalidError("note", "note must be a string")
    try:
        return check_note(text)
    except NoteError as exc:
        raise InvalidError("note", str(exc)) from None


def _subject(finding_id: int) -> str:
    return f"finding:{finding_id}"


def acknowledge(
    session: Session, actor: Actor, ids: Iterable[int], note: str, *, now: dt.datetime
) -> list[Finding]:
    """Acknowledge every finding of `ids` (duplicates once) with one note by `actor`, each
    audited; all or nothing: MissingFindingsError naming those that do not exist (the caller's
    transaction rolls back)."""
    note = checked_note(note)
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        raise InvalidError("ids", "ids must be a non-empty list")
    if len(wanted) > MAX_BULK_ACK:
        raise InvalidError("ids", f"at most {MAX_BULK_ACK} findings at once")
    done, missing = [], []
    for finding_id in wanted:
        finding = acknowledge_finding(
            session, finding_id=finding_id, note=note, now=now, author=actor.name
        )
        if finding is None:
            missing.append(finding_id)
            continue
        done.append(finding)
        audit(session, actor, AuditAction.FINDING_ACK, _subject(finding_id), note, now=now)
    if missing:
        raise MissingFindingsError(missing)
    return done


def assign(
    session: Session, actor: Actor, finding_id: int, assignee: str | None, *, now: dt.datetime
) -> Finding:
    """Give the finding to `assignee` (None: nobody), audited; UnknownOperatorError for a name
    no operator has, MissingFindingsError when there is no such finding."""
    if assignee is not None and not is_operator(session, assignee):
        raise UnknownOperatorError(f"no operator is named {assignee!r}")
    finding = assign_finding(session, finding_id=finding_id, assignee=assignee, now=now)
    if finding is None:
        raise MissingFindingsError([finding_id])
    detail = assignee or "nobody"
    audit(session, actor, AuditAction.FINDING_ASSIGN, _subject(finding_id), detail, now=now)
    return finding


def note(
    session: Session, actor: Actor, finding_id: int, text: str, *, now: dt.datetime
) -> FindingNote:
    """Add `actor`'s note (checked: InvalidError), audited; MissingFindingsError when there is
    no such finding."""
    text = checked_note(text)
    finding = add_note(session, finding_id=finding_id, author=actor.name, note=text, now=now)
    if finding is None:
        raise MissingFindingsError([finding_id])
    audit(session, actor, AuditAction.FINDING_NOTE, _subject(finding_id), text, now=now)
    return finding
