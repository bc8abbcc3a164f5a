"""Rebuild transfer state from the archived raw deliveries (`payrecon replay`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import ColumnElement, bindparam, select, update
from sqlmodel import Session, col

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
    arrival order. The provider's confirmed answer is kept: replay never un-confirms.

    Relay events: replay writes no `transfer.reported` — every outcome it re-applies was
    reported when its delivery first arrived, and the merchant's systems must not hear it
    twice. A finding it opens or reopens is a new change and writes `finding.opened`.
    """
    summary = ReplaySummary()
    where: list[ColumnElement[bool]] = [
        col(Delivery.outcome).in_(_APPLIED),
        col(Delivery.event_type).in_(_HANDLED),
    ]
    if since is not None:
        where.append(col(Delivery.received_at) >= since)
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
    done: set[int] = set()
    for start in range(0, len(transfer_ids), BATCH):
        chunk = transfer_ids[start : start + BATCH]
        schedule = _confirmed_schedule(session, chunk)
        rows = session.execute(
            select(Delivery.id, Delivery.body, Delivery.event_id, Delivery.webhook_id)  # type: ignore[call-overload]
            .where(Delivery.transfer_id.in_(chunk), *where[:2])  # type: ignore[union-attr]
            .order_by(Delivery.id)
        ).all()
        for delivery_id, body, event_id, webhook_id in rows:
            summary.deliveries += 1
            _replay_one(session, summary, done, delivery_id, bytes(body), event_id, webhook_id, now)
        _restore_schedule(session, schedule)
    return summary


def _confirmed_schedule(session: Session, chunk: list[int]) -> dict[int, dt.datetime | None]:
    """When each transfer of `chunk` that the provider already confirmed is next looked up."""
    table = Transfer.__table__  # type: ignore[attr-defined]
    rows = session.execute(
        select(table.c.id, table.c.next_check_at).where(
            table.c.id.in_(chunk), table.c.confirmed.is_(True)
        )
    )
    return {row.id: row.next_check_at for row in rows}


def _restore_schedule(session: Session, schedule: dict[int, dt.datetime | None]) -> None:
    """Put back the next lookup of confirmed transfers that re-applying their deliveries moved.

    Applying a webhook makes its transfer due at once (it is new evidence). Replayed deliveries
    are not new: each was applied, and looked up, when it first arrived. A transfer the
    provider confirmed keeps the schedule it had, so a replay (for instance after a restore, or
    against a provider that has since lost its records) never sends it to be looked up again.
    """
    if not schedule:
        return
    table = Transfer.__table__  # type: ignore[attr-defined]
    session.execute(
        update(table)
        .where(table.c.id == bindparam("transfer_id"))
        .values(next_check_at=bindparam("next_check"))
        .execution_options(synchronize_session=False),
        [{"transfer_id": tid, "next_check": at} for tid, at in schedule.items()],
    )


def _replay_one(
    session: Session,
    summary: ReplaySummary,
    done: set[int],
    delivery_id: int,
    body: bytes,
    event_id: int | None,
    webhook_id: str | None,
    now: dt.datetime,
) -> None:
    try:
        event = parse_event(body)
    except DeliveryInvalidError:
        return
    if not isinstance(event, TransferEvent):
        return
    if event_id is None:
        # The archive holds a delivery whose logical event is gone: record it again and
        # link the archived delivery to it (the raw body itself is never changed).
        applied = apply_event(session, event, webhook_id=webhook_id, now=now, report=False)
        table = Delivery.__table__  # type: ignore[attr-defined]
        session.execute(
            update(table).where(table.c.id == delivery_id).values(event_id=applied.event_id)
        )
        if applied.outcome is DeliveryOutcome.ACCEPTED and applied.event_id is not None:
            done.add(applied.event_id)
            summary.recreated += 1
            return
        event_id = applied.event_id
    # Deliveries come in arrival order, so the first one seen of an event is the applied one.
    if event_id is not None and event_id not in done:
        done.add(event_id)
        stored = session.get(WebhookEvent, event_id)
        if stored is not None:
            reapply_outcome(session, event, stored.transfer_id, now=now)
            summary.reapplied += 1
