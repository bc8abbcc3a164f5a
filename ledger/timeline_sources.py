"""The timeline's sources for a transfer or a collection: each reads one table and yields
typed entries.

Every source is bounded (`SOURCE_LIMIT` newest rows): a transfer retried for weeks still
renders. A collection has no webhooks (the provider sends none for them); every other source
serves both.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.models import (
    Alert,
    AuditEntry,
    Collection,
    Delivery,
    Finding,
    FindingNote,
    ProviderCheck,
    RelayDelivery,
    RelayEvent,
    StatementAccount,
    StatementLine,
    Transfer,
)
from ledger.subjects import SubjectRef, about, subject_of
from ledger.timeline import Entry, EntryKind, merge

SOURCE_LIMIT = 200
_CHECKS = ProviderCheck.__table__  # type: ignore[attr-defined]
_FINDINGS = Finding.__table__  # type: ignore[attr-defined]


def _newest(statement: Any, id_column: Any) -> Any:
    return statement.order_by(id_column.desc()).limit(SOURCE_LIMIT)


def record_entries(transfer: Transfer | Collection) -> Iterator[Entry]:
    """The transfer's or collection's creation (and its confirmation)."""
    amount = "" if transfer.amount is None else f"amount {transfer.amount} kobo"
    yield Entry(transfer.created_at, EntryKind.RECORD, f"recorded ({transfer.origin})", amount)
    if transfer.confirmed_at is not None:
        # A reversed transfer was confirmed successful first (docs/rules.md: Reversals).
        status = "successful" if transfer.status == "reversed" else transfer.status
        yield Entry(
            transfer.confirmed_at,
            EntryKind.RECORD,
            f"confirmed {status} by the provider",
            sequence=1,
        )


def reversal_entries(transfer: Transfer) -> Iterator[Entry]:
    """The transfer's reversal, when a confirmed success came back (docs/rules.md: Reversals)."""
    if transfer.reversed_at is not None:
        yield Entry(
            transfer.reversed_at,
            EntryKind.RECORD,
            f"reversed after success (found by {transfer.reversal_source})",
            transfer.reversal_reason or "",
            sequence=2,
        )


def webhook_entries(session: Session, transfer_id: int) -> Iterator[Entry]:
    """Every webhook delivery archived for the transfer."""
    rows = session.execute(
        _newest(select(Delivery).where(col(Delivery.transfer_id) == transfer_id), col(Delivery.id))
    ).scalars()
    for row in rows:
        detail = f"from {row.remote_addr or 'unknown address'}, {row.size} bytes"
        if row.error:
            detail += f"; {row.error}"
        yield Entry(
            row.received_at,
            EntryKind.WEBHOOK,
            f"webhook {row.event_type or '(unknown type)'}: {row.outcome}",
            detail,
            sequence=row.id or 0,
        )


def check_entries(
    session: Session, subject: SubjectRef, *, confirmed_at: Any = None
) -> Iterator[Entry]:
    """Every provider check kept for the transfer or collection; a transfer's checks after
    `confirmed_at` are its re-verifications (docs/rules.md: Reversals)."""
    rows = session.execute(
        _newest(
            select(ProviderCheck).where(about(_CHECKS.c, subject.subject, subject.id)),
            col(ProviderCheck.id),
        )
    ).scalars()
    for row in rows:
        said = row.provider_status or row.result.replace("_", " ")
        figures = [
            f"{name} {value} kobo"
            for name, value in (("amount", row.amount), ("fee", row.fee))
            if value is not None
        ]
        detail = ", ".join([*figures, *filter(None, [row.error])])
        title = f"provider check: {said} (HTTP {row.http_status or 'no answer'})"
        if confirmed_at is not None and row.checked_at > confirmed_at:
            title = "re-verification " + title
        yield Entry(row.checked_at, EntryKind.CHECK, title, detail, sequence=row.id or 0)


def notes_of_findings(session: Session, findings: list[Finding]) -> list[FindingNote]:
    """The findings' notes, newest first (bounded like every source)."""
    ids = [f.id for f in findings if f.id is not None]
    if not ids:
        return []
    return list(
        session.execute(
            _newest(
                select(FindingNote).where(col(FindingNote.finding_id).in_(ids)),
                col(FindingNote.id),
            )
        ).scalars()
    )


def written_notes(notes: list[FindingNote]) -> set[tuple[str, Any, str]]:
    """(`finding:ID`, time, text) of each note: a note is shown once, as its note entry, and
    the acknowledgement or audit row that wrote it at the same instant does not repeat it."""
    return {(f"finding:{n.finding_id}", n.created_at, n.body) for n in notes}


def finding_entries(
    session: Session, findings: list[Finding], notes: list[FindingNote] | None = None
) -> Iterator[Entry]:
    """Each finding's opening, acknowledgement and resolution, its notes and its alerts."""
    if notes is None:
        notes = notes_of_findings(session, findings)
    written = written_notes(notes)
    for finding in findings:
        fid = finding.id or 0
        name = f"finding {fid} {finding.kind}"
        yield Entry(
            finding.opened_at, EntryKind.FINDING, f"{name} opened", finding.detail, sequence=fid
        )
        if finding.acknowledged_at is not None:
            said = finding.ack_note or ""
            if (f"finding:{fid}", finding.acknowledged_at, said) in written:
                said = ""  # the note entry beside it shows it, with its author
            yield Entry(
                finding.acknowledged_at,
                EntryKind.FINDING,
                f"{name} acknowledged",
                said,
                sequence=fid,
            )
        if finding.resolved_at is not None:
            yield Entry(finding.resolved_at, EntryKind.FINDING, f"{name} resolved", sequence=fid)
    ids = [f.id for f in findings if f.id is not None]
    if not ids:
        return
    for note in notes:
        yield Entry(
            note.created_at,
            EntryKind.NOTE,
            f"note on finding {note.finding_id}",
            note.body,
            actor=note.author,
            sequence=note.id or 0,
        )
    alerts = session.execute(
        _newest(select(Alert).where(col(Alert.finding_id).in_(ids)), col(Alert.id))
    ).scalars()
    for alert in alerts:
        yield Entry(
            alert.created_at,
            EntryKind.ALERT,
            f"alert {alert.status}: {alert.title}",
            alert.error or "",
            sequence=alert.id or 0,
        )


def relay_entries(session: Session, subject: SubjectRef) -> Iterator[Entry]:
    """Each relay event about the subject, with where its deliveries stand."""
    events = list(
        session.execute(
            _newest(
                select(RelayEvent).where(
                    col(RelayEvent.subject) == subject.kind,
                    col(RelayEvent.subject_id) == subject.id,
                ),
                col(RelayEvent.id),
            )
        ).scalars()
    )
    deliveries: dict[int, list[RelayDelivery]] = {e.id or 0: [] for e in events}
    if deliveries:
        for delivery in session.execute(
            select(RelayDelivery)
            .where(col(RelayDelivery.event_id).in_(list(deliveries)))
            .order_by(col(RelayDelivery.id))
        ).scalars():
            deliveries[delivery.event_id].append(delivery)
    for event in events:
        states = [
            f"endpoint {d.endpoint_id}: {d.status} after {d.attempts} attempt(s)"
            + (f", last HTTP {d.last_status_code}" if d.last_status_code else "")
            for d in deliveries[event.id or 0]
        ]
        yield Entry(
            event.created_at,
            EntryKind.RELAY,
            f"relay event {event.type} #{event.sequence}",
            "; ".join(states) or "no endpoint subscribed",
            sequence=event.id or 0,
        )


def _repeats_a_note(written: set[tuple[str, Any, str]], subject: str, at: Any, text: str) -> bool:
    # The audit row keeps the note's text, cut to its detail limit with a "…" when longer.
    if (subject, at, text) in written:
        return True
    return text.endswith("…") and any(
        (s, a) == (subject, at) and body.startswith(text[:-1]) for s, a, body in written
    )


def audit_entries(
    session: Session, subjects: list[str], written: set[tuple[str, Any, str]] | None = None
) -> Iterator[Entry]:
    """Operators' actions on any of `subjects` (`transfer:REF`, `finding:ID`, …); a note
    or acknowledgement whose text a note entry shows (`written_notes`) without repeating it."""
    rows = session.execute(
        _newest(select(AuditEntry).where(col(AuditEntry.subject).in_(subjects)), col(AuditEntry.id))
    ).scalars()
    for row in rows:
        detail = row.detail or ""
        if written and _repeats_a_note(written, row.subject or "", row.at, detail):
            detail = ""
        yield Entry(
            row.at,
            EntryKind.OPERATOR,
            f"{row.action} on {row.subject}",
            detail,
            actor=f"{row.operator} ({row.role})",
            sequence=row.id or 0,
        )


def statement_entries(session: Session, subject: SubjectRef) -> Iterator[Entry]:
    """Each statement line matched or suggested to the subject, at the time it was matched
    (the line's own date, a statement day, is in its title)."""
    column = (
        col(StatementLine.collection_id)
        if subject.kind == "collection"
        else col(StatementLine.transfer_id)
    )
    rows = session.execute(
        _newest(
            select(StatementLine, StatementAccount.name)  # type: ignore[call-overload]
            .join(StatementAccount, col(StatementAccount.id) == col(StatementLine.account_id))
            .where(column == subject.id),
            col(StatementLine.id),
        )
    )
    for line, account in rows:
        what = line.role or line.direction
        verb = "suggested" if line.state == "suggested" else line.state
        title = (
            f"statement line {line.id} {verb}: {account} {line.date.isoformat()}, "
            f"{line.direction} {line.amount} kobo ({what})"
        )
        detail = " / ".join(filter(None, [line.reference, line.narration]))
        if line.matched_by:
            detail += f"; matched by {line.matched_by}"
        at = line.matched_at or _midday(line.date)
        yield Entry(at, EntryKind.STATEMENT, title, detail, sequence=line.id or 0)


def _midday(day: dt.date) -> dt.datetime:
    # Noon in Lagos: a line without a match time sits on its statement day.
    return dt.datetime.combine(day, dt.time(11, 0), tzinfo=dt.UTC)


def transfer_timeline(session: Session, transfer: Transfer) -> list[Entry]:
    """The transfer's whole story in time order, operators' actions included."""
    subject = subject_of(transfer)
    return _timeline(
        session,
        transfer,
        subject,
        webhook_entries(session, subject.id),
        reversal_entries(transfer),
    )


def collection_timeline(session: Session, collection: Collection) -> list[Entry]:
    """The collection's whole story in time order, operators' actions included."""
    return _timeline(session, collection, subject_of(collection))


def _timeline(
    session: Session, row: Transfer | Collection, subject: SubjectRef, *extra: Iterator[Entry]
) -> list[Entry]:
    findings = list(
        session.execute(
            select(Finding)
            .where(about(_FINDINGS.c, subject.subject, subject.id))
            .order_by(col(Finding.id))
        ).scalars()
    )
    notes = notes_of_findings(session, findings)
    return merge(
        record_entries(row),
        *extra,
        check_entries(
            session,
            subject,
            confirmed_at=row.confirmed_at if isinstance(row, Transfer) else None,
        ),
        finding_entries(session, findings, notes),
        statement_entries(session, subject),
        relay_entries(session, subject),
        audit_entries(
            session,
            [
                subject.key,
                *(f"finding:{f.id}" for f in findings),
                *(f"statement_line:{i}" for i in _line_ids(session, subject)),
            ],
            written_notes(notes),
        ),
    )


def _line_ids(session: Session, subject: SubjectRef) -> list[int]:
    """The statement lines matched or suggested to the subject (their audit rows are part of
    its story: who matched, confirmed or unmatched them)."""
    column = (
        col(StatementLine.collection_id)
        if subject.kind == "collection"
        else col(StatementLine.transfer_id)
    )
    rows = session.execute(
        _newest(select(StatementLine.id).where(column == subject.id), col(StatementLine.id))  # type: ignore[call-overload]
    )
    return [row[0] for row in rows]
