"""Raise, resolve and acknowledge findings with their events: the one way to change a finding.

Each function wraps its `ledger.findings` namesake and, when the finding's state changed,
writes `finding.opened`, `finding.resolved` or `finding.acknowledged` through the outbox in
the same transaction. The subject is the finding's (`ledger.subjects`), so its events
share that subject's sequence. The receiver's batch is the one other writer of findings: it opens
those of transfers it creates with bulk statements and writes their events beside them.
"""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from sqlmodel import Session

from ledger import findings as ledger_findings
from ledger.events import payloads
from ledger.events.outbox import NewEvent, Subscriber, emit, emit_many
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


def raise_new_findings(
    session: Session,
    *,
    kind: FindingKind,
    subject: Subject,
    details: dict[int, str],
    references: dict[int, str],
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> set[int]:
    """`raise_finding` for many subjects that have no finding of `kind` yet, with a few
    statements per thousands (a bad statement import raises one per line): the findings and
    their `finding.opened` events (`emit_many`), as one by one. The subject ids opened; the
    others (a finding of that kind already there) are for `raise_finding`."""
    opened = ledger_findings.open_new_findings(
        session, subject=subject, kind=kind, details=details, now=now
    )
    events = [
        NewEvent(
            RelayEventType.FINDING_OPENED,
            subject,
            subject_id,
            references[subject_id],
            payloads.finding_fields(
                id=opened[subject_id],
                kind=kind.value,
                subject=subject,
                reference=references[subject_id],
                detail=details[subject_id],
                opened_at=now,
                resolved_at=None,
                acknowledged_at=None,
            ),
        )
        for subject_id in sorted(opened)
    ]
    emit_many(session, events, now=now, endpoints=endpoints)
    return set(opened)


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
    reference: str | None = None,
    endpoints: list[Subscriber] | None = None,
) -> Finding | None:
    """Acknowledge a finding with a note (`ledger.findings.check_note`) and write
    `finding.acknowledged` (with the note); None when there is no such finding. `author`
    (an operator's name) also keeps the note among the finding's notes. `reference` (the
    subject's) and `endpoints` (`subscribers`) save their reads when many are acknowledged
    in one transaction."""
    finding = ledger_findings.acknowledge_finding(
        session, finding_id=finding_id, note=note, now=now, author=author
    )
    if finding is not None:
        emit_finding(
            session,
            RelayEventType.FINDING_ACKNOWLEDGED,
            finding,
            reference,
            now=now,
            endpoints=endpoints,
        )
    return finding


def acknowledge_findings(
    session: Session,
    findings: list[Any],
    *,
    note: str,
    now: dt.datetime,
    author: str,
    references: dict[tuple[str, int], str],
    endpoints: list[Subscriber] | None = None,
) -> None:
    """`acknowledge_finding` with `author` for many findings (rows of `finding`, locked by the
    caller) with the same rows — the acknowledgement, the note, one `finding.acknowledged`
    each — in a few statements (`ledger.findings.acknowledge_rows`, `emit_many`).
    `references` holds each subject's reference by (subject, id)."""
    note = ledger_findings.check_note(note)
    ledger_findings.acknowledge_rows(
        session, [int(f.id) for f in findings], note=note, now=now, author=author
    )
    events = []
    for row in findings:
        # The finding as it now stands, for its event.
        finding = SimpleNamespace(**{**row._mapping, "acknowledged_at": now, "ack_note": note})
        reference = references[(finding.subject, finding.subject_id)]
        subject = Subject(finding.subject)
        events.append(
            NewEvent(
                RelayEventType.FINDING_ACKNOWLEDGED,
                subject,
                finding.subject_id,
                reference,
                payloads.finding(finding, reference=reference, subject=subject),  # type: ignore[arg-type]
            )
        )
    emit_many(session, events, now=now, endpoints=endpoints)


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
