"""Apply one archived delivery to the ledger inside the caller's transaction (idempotent).

The per-delivery path: read what `receiver.decisions` needs, decide, write — the decision's
relay events included, through `ledger.events.outbox` in the same transaction. The group-commit
writer falls back to it when a batch fails, and replay records and re-applies events with it.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert, or_, select, update
from sqlmodel import Session

from ledger.events import transfers as relay_transfers
from ledger.events.findings import raise_finding
from ledger.events.types import Subject
from ledger.models import Delivery, Transfer, WebhookEvent
from ledger.types import DeliveryOutcome, FindingKind
from ledger.upsert import insert_ignore
from receiver.decisions import (
    HELD_COLUMNS,
    Decision,
    apply_to,
    decide,
    index_transfers,
    not_applied,
)
from receiver.errors import IngestUnavailableError
from receiver.events import ParsedEvent, TransferEvent

# The tables both write paths (this module and batch.py) write to.
EVENTS = WebhookEvent.__table__  # type: ignore[attr-defined]
TRANSFERS = Transfer.__table__  # type: ignore[attr-defined]
DELIVERIES = Delivery.__table__  # type: ignore[attr-defined]

# The columns of an archived delivery (all but its id), in `archive_row`'s order.
ARCHIVE_COLUMNS = (
    "received_at",
    "remote_addr",
    "headers",
    "body",
    "body_sha256",
    "size",
    "outcome",
    "error",
    "event_type",
    "reference",
    "webhook_id",
    "event_id",
    "transfer_id",
)
# The columns of a recorded event (all but its id), in `event_row`'s order.
EVENT_COLUMNS = (
    "event",
    "reference",
    "webhook_id",
    "content_hash",
    "payload",
    "transfer_id",
    "received_at",
)
# Each lost race leaves the row it hit committed, so a fresh read settles it; three reads
# cover the worst case (the transfer, then the event, stored first by others).
_ATTEMPTS = 3


@dataclass
class IncomingDelivery:
    """An authenticated delivery as received: raw body, headers, and what parsing made of it."""

    received_at: dt.datetime
    remote_addr: str | None
    headers: dict[str, str]
    body: bytes
    body_sha256: str
    size: int
    parsed: ParsedEvent | None = None
    error: str | None = None
    invalid_outcome: DeliveryOutcome = DeliveryOutcome.INVALID
    webhook_id: str | None = None
    # The sender's W3C `traceparent` header as sent (unchecked bytes, None when absent): the
    # batch span links to it while tracing is on. Its relay events keep the batch span's.
    traceparent: bytes | None = None


@dataclass
class Applied:
    """What applying a delivery did."""

    outcome: DeliveryOutcome
    transfer_id: int | None = None
    event_id: int | None = None
    findings: list[FindingKind] = field(default_factory=list)


def archive_row(delivery: IncomingDelivery, applied: Applied, received_at: Any) -> tuple[Any, ...]:
    """The archive row of a delivery in ARCHIVE_COLUMNS order; `received_at` as the writer
    binds it."""
    parsed = delivery.parsed
    return (
        received_at,
        delivery.remote_addr,
        json.dumps(delivery.headers, sort_keys=True),
        delivery.body,
        delivery.body_sha256,
        delivery.size,
        applied.outcome.value,
        delivery.error,
        None if parsed is None else str(parsed.event),
        None if parsed is None else parsed.reference,
        delivery.webhook_id,
        applied.event_id,
        applied.transfer_id,
    )


def event_row(
    event: TransferEvent, webhook_id: str | None, transfer_id: int, received_at: Any
) -> tuple[Any, ...]:
    """The row recording a logical event, in EVENT_COLUMNS order."""
    return (
        event.event.value,
        event.reference,
        webhook_id,
        event.content_hash,
        event.canonical,
        transfer_id,
        received_at,
    )


def archive(session: Session, delivery: IncomingDelivery, applied: Applied) -> None:
    """Append the raw delivery to the archive with its outcome."""
    row = archive_row(delivery, applied, delivery.received_at)
    session.execute(insert(DELIVERIES).values(dict(zip(ARCHIVE_COLUMNS, row, strict=True))))


def apply_delivery(session: Session, delivery: IncomingDelivery, *, now: dt.datetime) -> Applied:
    """Decide the outcome of one delivery, apply it if new, and archive it. Never commits."""
    parsed = delivery.parsed
    if isinstance(parsed, TransferEvent):
        # Its events keep the current span's trace context: the batch's (ledger.events.trace).
        applied = apply_event(session, parsed, webhook_id=delivery.webhook_id, now=now)
    else:
        applied = Applied(not_applied(parsed, delivery.invalid_outcome))
    archive(session, delivery, applied)
    return applied


def apply_event(
    session: Session,
    event: TransferEvent,
    *,
    webhook_id: str | None,
    now: dt.datetime,
    report: bool = True,
) -> Applied:
    """Record the logical event once; a repeat is a duplicate or a conflict, applied never.

    `report=False` (replay) writes no `transfer.reported`: the outcome was reported when it
    first arrived. Findings opened still write `finding.opened`.
    """
    for _ in range(_ATTEMPTS):
        applied = _attempt(session, event, webhook_id, now, report)
        if applied is not None:
            return applied
    raise IngestUnavailableError(f"other transactions keep writing the rows of {event.reference}")


def reapply_outcome(
    session: Session, event: TransferEvent, transfer_id: int, *, now: dt.datetime
) -> Applied:
    """Apply an already-recorded event's outcome to its transfer again (for replay): no
    `transfer.reported` (it was reported when first received); findings it opens or reopens
    write `finding.opened`."""
    by_reference, by_provider = index_transfers(_held_transfers(session, event, transfer_id))
    transfer = next(held for held in by_reference.values() if held.id == transfer_id)
    decision = apply_to(
        event, transfer, by_reference=by_reference, by_provider=by_provider, now=now
    )
    _update(session, transfer_id, decision)
    return _findings(session, decision, transfer_id, None, now)


def _attempt(
    session: Session, event: TransferEvent, webhook_id: str | None, now: dt.datetime, report: bool
) -> Applied | None:
    """Apply the event once; None when another transaction stored one of its rows first."""
    recorded = _recorded(session, event, webhook_id)
    if recorded is not None:
        recorded_id, content_hash, owner_id = recorded
        decision = decide(
            event, recorded_hash=content_hash, by_reference={}, by_provider={}, now=now
        )
        return _findings(session, decision, owner_id, recorded_id, now)
    by_reference, by_provider = index_transfers(_held_transfers(session, event))
    decision = decide(
        event, recorded_hash=None, by_reference=by_reference, by_provider=by_provider, now=now
    )
    transfer_id = _store_transfer(session, decision)
    if transfer_id is None:
        return None
    values = dict(zip(EVENT_COLUMNS, event_row(event, webhook_id, transfer_id, now), strict=True))
    event_id = insert_ignore(session, EVENTS, values)
    if event_id is None:
        return None
    if decision.created is None:
        _update(session, transfer_id, decision)
    if report and decision.reported is not None:
        assert decision.transfer is not None
        relay_transfers.reported(
            session,
            transfer_id=transfer_id,
            reference=decision.transfer.reference,
            data=decision.reported,
            now=now,
        )
    return _findings(session, decision, transfer_id, event_id, now)


def _store_transfer(session: Session, decision: Decision) -> int | None:
    """The id of an accepted decision's transfer, inserted when new; None when another
    transaction inserted it first."""
    assert decision.transfer is not None
    if decision.created is None:
        return decision.transfer.id
    return insert_ignore(session, TRANSFERS, decision.created)


def _recorded(
    session: Session, event: TransferEvent, webhook_id: str | None
) -> tuple[int, str, int] | None:
    """(id, content hash, transfer id) of the event recorded under its key or webhook id."""
    columns = (EVENTS.c.id, EVENTS.c.content_hash, EVENTS.c.transfer_id)
    row = session.execute(
        select(*columns).where(
            EVENTS.c.event == event.event.value, EVENTS.c.reference == event.reference
        )
    ).first()
    if row is None and webhook_id is not None:
        row = session.execute(select(*columns).where(EVENTS.c.webhook_id == webhook_id)).first()
    return None if row is None else (row[0], row[1], row[2])


def _held_transfers(
    session: Session, event: TransferEvent, transfer_id: int | None = None
) -> list[Any]:
    """HELD_COLUMNS of the transfers the event's references name (and of `transfer_id`),
    locked until commit."""
    keys = {event.reference, event.merchant_reference or event.reference}
    columns = TRANSFERS.c
    named = [columns.reference.in_(keys), columns.provider_reference.in_(keys)]
    if transfer_id is not None:
        named.append(columns.id == transfer_id)
    statement = (
        select(*(columns[name] for name in HELD_COLUMNS))
        .where(or_(*named))
        .order_by(columns.id)
        .with_for_update()
    )
    return list(session.execute(statement).all())


def _update(session: Session, transfer_id: int, decision: Decision) -> None:
    assert decision.changes is not None
    session.execute(
        update(TRANSFERS).where(TRANSFERS.c.id == transfer_id).values(**decision.changes)
    )


def _findings(
    session: Session,
    decision: Decision,
    transfer_id: int,
    event_id: int | None,
    now: dt.datetime,
) -> Applied:
    """Raise the decision's findings on the transfer (each opened one writes its event);
    what was applied."""
    applied = Applied(decision.outcome, transfer_id, event_id)
    # A repeat's decision names no transfer: the finding looks the reference up.
    reference = None if decision.transfer is None else decision.transfer.reference
    for finding in decision.findings:
        if raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=transfer_id,
            kind=finding.kind,
            detail=finding.detail,
            now=now,
            reference=reference,
        ):
            applied.findings.append(finding.kind)
    return applied
