"""Apply one archived delivery to the ledger inside the caller's transaction (idempotent)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

from sqlalchemy import insert, select, update
from sqlmodel import Session

from ledger.findings import raise_finding
from ledger.models import Delivery, Transfer, WebhookEvent
from ledger.queries import find_transfer
from ledger.types import DeliveryOutcome, FindingKind, TransferOrigin
from ledger.upsert import insert_ignore
from receiver.events import IgnoredEvent, ParsedEvent, TransferEvent

_EVENTS = WebhookEvent.__table__  # type: ignore[attr-defined]
_TRANSFERS = Transfer.__table__  # type: ignore[attr-defined]
_DELIVERIES = Delivery.__table__  # type: ignore[attr-defined]


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


@dataclass
class Applied:
    """What applying a delivery did."""

    outcome: DeliveryOutcome
    transfer_id: int | None = None
    event_id: int | None = None
    findings: list[FindingKind] = field(default_factory=list)


def archive(session: Session, delivery: IncomingDelivery, applied: Applied) -> None:
    """Append the raw delivery to the archive with its outcome."""
    parsed = delivery.parsed
    session.execute(
        insert(_DELIVERIES).values(
            received_at=delivery.received_at,
            remote_addr=delivery.remote_addr,
            headers=json.dumps(delivery.headers, sort_keys=True),
            body=delivery.body,
            body_sha256=delivery.body_sha256,
            size=delivery.size,
            outcome=applied.outcome.value,
            error=delivery.error,
            event_type=parsed.event
            if isinstance(parsed, IgnoredEvent)
            else (parsed.event.value if parsed is not None else None),
            reference=parsed.reference if parsed is not None else None,
            webhook_id=delivery.webhook_id,
            event_id=applied.event_id,
            transfer_id=applied.transfer_id,
        )
    )


def apply_delivery(session: Session, delivery: IncomingDelivery, *, now: dt.datetime) -> Applied:
    """Decide the outcome of one delivery, apply it if new, and archive it. Never commits."""
    parsed = delivery.parsed
    if parsed is None:
        applied = Applied(delivery.invalid_outcome)
    elif isinstance(parsed, IgnoredEvent):
        applied = Applied(DeliveryOutcome.IGNORED)
    else:
        applied = apply_event(session, parsed, webhook_id=delivery.webhook_id, now=now)
    archive(session, delivery, applied)
    return applied


def apply_event(
    session: Session, event: TransferEvent, *, webhook_id: str | None, now: dt.datetime
) -> Applied:
    """Record the logical event once; a repeat is a duplicate or a conflict, applied never."""
    existing = _existing_event(session, event, webhook_id)
    if existing is not None:
        return _repeat(session, event, existing, now)
    transfer_id, orphan = _transfer_for(session, event, now)
    event_id = insert_ignore(
        session,
        _EVENTS,
        {
            "event": event.event.value,
            "reference": event.reference,
            "webhook_id": webhook_id,
            "content_hash": event.content_hash,
            "payload": event.canonical,
            "transfer_id": transfer_id,
            "received_at": now,
        },
    )
    if event_id is None:
        # Another transaction (another process) recorded it first; we are the repeat.
        existing = _existing_event(session, event, webhook_id)
        if existing is None:  # pragma: no cover - the unique key must have been hit
            raise RuntimeError("event insert ignored but no event found")
        return _repeat(session, event, existing, now)
    applied = Applied(DeliveryOutcome.ACCEPTED, transfer_id, event_id)
    if orphan:
        _finding(
            session,
            applied,
            transfer_id,
            FindingKind.ORPHAN_EVENT,
            now,
            f"{event.event.value} for {event.reference} "
            f"(merchant reference {event.merchant_reference or 'none'}) that the ledger "
            "never initiated or expected",
        )
    _apply_outcome(session, event, transfer_id, applied, now)
    return applied


def _existing_event(
    session: Session, event: TransferEvent, webhook_id: str | None
) -> tuple[int, str, int] | None:
    columns = (_EVENTS.c.id, _EVENTS.c.content_hash, _EVENTS.c.transfer_id)
    row = session.execute(
        select(*columns).where(
            _EVENTS.c.event == event.event.value, _EVENTS.c.reference == event.reference
        )
    ).first()
    if row is None and webhook_id is not None:
        row = session.execute(select(*columns).where(_EVENTS.c.webhook_id == webhook_id)).first()
    return None if row is None else (row[0], row[1], row[2])


def _repeat(
    session: Session, event: TransferEvent, existing: tuple[int, str, int], now: dt.datetime
) -> Applied:
    event_id, content_hash, transfer_id = existing
    if content_hash == event.content_hash:
        return Applied(DeliveryOutcome.DUPLICATE, transfer_id, event_id)
    applied = Applied(DeliveryOutcome.CONFLICTING, transfer_id, event_id)
    _finding(
        session,
        applied,
        transfer_id,
        FindingKind.CONFLICTING_DELIVERY,
        now,
        f"{event.event.value} for {event.reference} was delivered again with different "
        "content; the first delivery stays applied",
    )
    return applied


def _transfer_for(session: Session, event: TransferEvent, now: dt.datetime) -> tuple[int, bool]:
    """The transfer the event is about, created as an orphan when the ledger never knew it."""
    transfer = None
    if event.merchant_reference:
        transfer = find_transfer(session, event.merchant_reference)
    if transfer is None:
        transfer = find_transfer(session, event.reference)
    if transfer is not None:
        assert transfer.id is not None
        return transfer.id, False
    new_id = insert_ignore(
        session,
        _TRANSFERS,
        {
            "reference": event.merchant_reference or event.reference,
            "provider_reference": event.reference,
            "origin": TransferOrigin.WEBHOOK.value,
            "status": event.status.value,
            "confirmed": False,
            "check_attempts": 0,
            "not_found_count": 0,
            "created_at": now,
            "updated_at": now,
        },
    )
    if new_id is not None:
        return new_id, True
    # A concurrent delivery created it between our lookup and insert.
    transfer = find_transfer(session, event.merchant_reference or event.reference)
    if transfer is None or transfer.id is None:
        raise RuntimeError(f"transfer for {event.reference!r} vanished")
    return transfer.id, transfer.origin == TransferOrigin.WEBHOOK.value


def _apply_outcome(
    session: Session, event: TransferEvent, transfer_id: int, applied: Applied, now: dt.datetime
) -> None:
    row = session.execute(
        select(
            _TRANSFERS.c.webhook_status,
            _TRANSFERS.c.confirmed,
            _TRANSFERS.c.provider_reference,
        )
        .where(_TRANSFERS.c.id == transfer_id)
        .with_for_update()
    ).one()
    webhook_status, confirmed, provider_reference = row
    # Every applied webhook makes the transfer due at once: a webhook is evidence, not proof.
    values: dict[str, object] = {"next_check_at": now, "updated_at": now}
    if provider_reference is None and find_transfer(session, event.reference) is None:
        values["provider_reference"] = event.reference
    if webhook_status is None:
        values.update(
            webhook_status=event.status.value,
            webhook_amount=event.amount,
            webhook_fee=event.fee,
        )
        if event.failure_reason is not None:
            values["failure_reason"] = event.failure_reason
        if not confirmed:
            values["status"] = event.status.value
    elif webhook_status != event.status.value:
        # Both outcomes arrived; the first stays, the provider's answer will decide.
        _finding(
            session,
            applied,
            transfer_id,
            FindingKind.STATUS_CONFLICT,
            now,
            f"webhooks reported both {webhook_status} and {event.status.value} "
            f"for {event.reference}",
        )
    session.execute(update(_TRANSFERS).where(_TRANSFERS.c.id == transfer_id).values(**values))


def reapply_outcome(
    session: Session, event: TransferEvent, transfer_id: int, *, now: dt.datetime
) -> Applied:
    """Apply an already-recorded event's outcome to its transfer again (for replay)."""
    applied = Applied(DeliveryOutcome.ACCEPTED, transfer_id)
    _apply_outcome(session, event, transfer_id, applied, now)
    return applied


def _finding(
    session: Session,
    applied: Applied,
    transfer_id: int,
    kind: FindingKind,
    now: dt.datetime,
    detail: str,
) -> None:
    if raise_finding(session, transfer_id=transfer_id, kind=kind, detail=detail, now=now):
        applied.findings.append(kind)
