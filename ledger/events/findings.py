"""Raise, resolve and acknowledge findings with their events: the one way to change a finding.

Each function wraps its `ledger.findings` namesake and, when the finding's state changed,
writes `finding.opened`, `finding.resolved` or `finding.acknowledged` through the outbox in
the same transaction. The subject is the finding's (`ledger.subjects`), so its events
share that subject's sequence. The receiver's batch is the one other writer of findings: it opens
those of transfers it creates with bulk statements and writes their events beside them.
"""

from __future__ import annotations

import datetime as dt

from sqlmodel import Session

from ledger import findings as ledger_findings
from ledger.events import payloads
from ledger.events.outbox import Subscriber, emit
from ledger.events.types import RelayEventType, Subject
from ledger.models import Finding
from ledger.subjects import subject_reference
from ledger.types import FindingKind


def raise_finding(
    session: Session,
    *,
    kind: FindingKind,
    detail: str,
    now: dt.datetime,
    subject: Subject,
    subject_id: int,
    reference: str | None = None,
    endpoints: list[Subscriber] | None = None,
) -> Finding | None:
    """Open (or reopen) a finding and write `finding.opened`; the finding, or None when it
    was already open (no event then).

    `reference` (the subject's) and `endpoints` (`ledger.events.outbox.subscribers`) save a
    read.
    """
    finding = ledger_findings.raise_finding(
        session,
        subject=subject,
        subject_id=subject_id,
        kind=kind,
        detail=detail,
        now=now,
    )
    if finding is not None:
        emit_finding(
            session, RelayEventType.FINDING_OPENED, finding, reference, now=now, endpoints=endpoints
        )
    return finding


def resolve_finding(
    session: Session,
    *,
    kind: FindingKind,
    now: dt.datetime,
    subject: Subject,
    subject_id: int,
    reference: str | None = None,
    endpoints: list[Subscriber] | None = None,
) -> Finding | None:
    """Close the open finding of `kind` on the subject and write `finding.resolved`; the
    finding, or None when none was open (no event then)."""
    finding = ledger_findings.resolve_finding(
        session, subject=subject, subject_id=subject_id, kind=kind, now=now
    )
    if finding is not None:
        emit_finding(
            session,
            RelayEventType.FINDING_RESOLVED,
            finding,
            reference,
            now=now,
            endpoints=endpoints,
        )
    return finding


def acknowledge_finding(
    session: Session,
    *,
    finding_id: int,
    note: str,
    now: dt.datetime,
    author: str | None = None,
) -> Finding | None:
    """Acknowledge a finding with a note (`ledger.findings.check_note`) and write
    `finding.acknowledged` (with the note); None when there is no such finding. `author`
    (an operator's name) also keeps the note among the finding's notes."""
    finding = ledger_findings.acknowledge_finding(
        session, finding_id=finding_id, note=note, now=now, author=author
    )
    if finding is not None:
        emit_finding(session, RelayEventType.FINDING_ACKNOWLEDGED, finding, None, now=now)
    return finding


def emit_finding(
    session: Session,
    type: RelayEventType,
    finding: Finding,
    reference: str | None,
    *,
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> str:
    """Write a `finding.*` event about the finding as it now stands; its `evt_` id."""
    subject, subject_id = subject_of(finding)
    if reference is None:
        reference = subject_reference(session, subject, subject_id)
    return emit(
        session,
        type=type,
        subject=subject,
        subject_id=subject_id,
        reference=reference,
        data=payloads.finding(finding, reference=reference, subject=subject),
        now=now,
        endpoints=endpoints,
    )


def subject_of(finding: Finding) -> tuple[Subject, int]:
    """What the finding is about: (its subject, that row's id)."""
    return Subject(finding.subject), finding.subject_id
