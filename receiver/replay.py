"""Rebuild transfer state from the archived raw deliveries (`payrecon replay`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlmodel import Session

from ledger.models import Delivery, Transfer, WebhookEvent
from ledger.types import DeliveryOutcome, EventType, TransferStatus
from receiver.apply import apply_event, reapply_outcome
from receiver.errors import DeliveryInvalidError
from receiver.events import TransferEvent, parse_event

_APPLIED = (
    DeliveryOutcome.ACCEPTED.value,
    DeliveryOutcome.DUPLICATE.value,
    DeliveryOutcome.CONFLICTING.value,
)
_HANDLED = [e.value for e in EventType]
BATCH = 1000


@dataclass
class ReplaySummary:
    """What a replay did."""

    deliveries: int = 0
    reapplied: int = 0
    recreated: int = 0
    transfers: int = 0


def replay(session: Session, *, since: dt.datetime | None, now: dt.datetime) -> ReplaySummary:
    """Reset the webhook evidence of affected transfers and apply their deliveries again, in
    arrival order. The provider's confirmed answer is kept: replay never un-confirms."""
    summary = ReplaySummary()
    where = [Delivery.outcome.in_(_APPLIED), Delivery.event_type.in_(_HANDLED)]  # type: ignore[union-attr]
    if since is not None:
        where.append(Delivery.received_at >= since)  # type: ignore[arg-type, operator]
    transfer_ids = [
        row[0]
        for row in session.execute(
            select(Delivery.transfer_id).where(*where).distinct()  # type: ignore[call-overload]
        )
        if row[0] is not None
    ]
    summary.transfers = len(transfer_ids)
    for start in range(0, len(transfer_ids), BATCH):
        chunk = transfer_ids[start : start + BATCH]
        table = Transfer.__table__  # type: ignore[attr-defined]
        session.execute(
            update(table)
            .where(table.c.id.in_(chunk))
            .values(webhook_status=None, webhook_amount=None, webhook_fee=None)
        )
        session.execute(
            update(table)
            .where(table.c.id.in_(chunk), table.c.confirmed.is_(False))
            .values(status=TransferStatus.PENDING.value, failure_reason=None)
        )
    first_delivery = dict(
        session.execute(
            select(Delivery.event_id, func.min(Delivery.id))  # type: ignore[call-overload]
            .where(Delivery.event_id.is_not(None))  # type: ignore[union-attr]
            .group_by(Delivery.event_id)
        ).all()
    )
    rows = session.execute(
        select(Delivery.id, Delivery.body, Delivery.event_id, Delivery.webhook_id)  # type: ignore[call-overload]
        .where(Delivery.transfer_id.in_(transfer_ids) if since is not None else True, *where)  # type: ignore[union-attr]
        .order_by(Delivery.id)
        .execution_options(yield_per=BATCH)
    )
    for delivery_id, body, event_id, webhook_id in rows:
        summary.deliveries += 1
        try:
            event = parse_event(bytes(body))
        except DeliveryInvalidError:
            continue
        if not isinstance(event, TransferEvent):
            continue
        if event_id is None:
            # The archive holds a delivery whose logical event is gone: record it again.
            apply_event(session, event, webhook_id=webhook_id, now=now)
            summary.recreated += 1
        elif first_delivery.get(event_id) == delivery_id:
            stored = session.get(WebhookEvent, event_id)
            if stored is not None:
                reapply_outcome(session, event, stored.transfer_id, now=now)
                summary.reapplied += 1
    return summary
