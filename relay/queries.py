"""What operators read of the relay (endpoints, events, deliveries, attempts) and the one small
write they make by hand: a delivery made due again.

Every function works in the caller's session and never commits. Records are plain dicts in
the shape the admin API answers and `payrecon endpoints list --json` prints; no secret, sealed
or not, is ever part of one.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import func, select
from sqlmodel import Session, col

from ledger.events.payloads import iso
from ledger.events.types import DeliveryStatus, RelayEventType, Subject, parse_types
from ledger.models import RelayAttempt, RelayDelivery, RelayEndpoint, RelayEvent
from ledger.queries import MAX_PAGE, MAX_ROW_ID, decode_cursor, encode_cursor
from relay.errors import DeliveryStateError, EndpointNotFoundError

# The cursor kind of event pages (`t` is the transfers').
EVENT_CURSOR = "e"
# `evt_` and a ULID of 26 Crockford base32 characters (ledger.events.ids).
EVENT_ID = re.compile(r"^evt_[0-9A-HJKMNP-TV-Z]{26}$")


def endpoint_record(
    endpoint: RelayEndpoint, *, pending: int = 0, secret: str | None = None
) -> dict[str, Any]:
    """An endpoint as operators see it; `secret` is added only by the answer that made it."""
    record: dict[str, Any] = {
        "id": endpoint.id,
        "url": endpoint.url,
        "description": endpoint.description,
        "events": sorted(parse_types(endpoint.event_types)),
        "enabled": endpoint.enabled,
        "disabled_reason": endpoint.disabled_reason,
        "pending": pending,
        "last_success_at": iso(endpoint.last_success_at),
        "failing_since": iso(endpoint.failing_since),
        "previous_secret_until": iso(endpoint.previous_secret_until),
        "created_at": iso(endpoint.created_at),
        "updated_at": iso(endpoint.updated_at),
        "removed_at": iso(endpoint.removed_at),
    }
    if secret is not None:
        record["secret"] = secret
    return record


def pending_counts(session: Session, endpoint_ids: list[int]) -> dict[int, int]:
    """Pending deliveries of each of the endpoints (absent: none)."""
    if not endpoint_ids:
        return {}
    rows = session.execute(
        select(col(RelayDelivery.endpoint_id), func.count())
        .where(
            col(RelayDelivery.endpoint_id).in_(endpoint_ids),
            col(RelayDelivery.status) == DeliveryStatus.PENDING.value,
        )
        .group_by(col(RelayDelivery.endpoint_id))
    ).all()
    return {int(row[0]): int(row[1]) for row in rows}


def endpoint_records(session: Session, endpoints: list[RelayEndpoint]) -> list[dict[str, Any]]:
    """The records of `endpoints`, each with its count of pending deliveries."""
    counts = pending_counts(session, [e.id for e in endpoints if e.id is not None])
    return [endpoint_record(e, pending=counts.get(e.id or 0, 0)) for e in endpoints]


def parse_row_id(text: str) -> int | None:
    """The row id an URL path or a command names, or None when it cannot be one (so the
    caller answers "not found" rather than binding a number no column holds)."""
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        return None
    value = int(text)
    return value if 0 < value <= MAX_ROW_ID else None


@dataclass(frozen=True)
class EventQuery:
    """The filters of an event listing, checked."""

    type: RelayEventType | None = None
    subject: Subject | None = None
    reference: str | None = None
    since: dt.datetime | None = None
    limit: int = 50
    cursor: int | None = None  # the id below which the page starts


@dataclass(frozen=True)
class EventPage:
    """One page of events, newest first, and the cursor of the next (None at the end)."""

    items: list[dict[str, Any]]
    next_cursor: str | None


def parse_subject(value: str) -> tuple[Subject, str | None]:
    """`transfer`, `collection`, `statement_line`, or one subject as `transfer:REFERENCE`
    (`statement_line:ID`); ValueError otherwise."""
    kind, colon, reference = value.partition(":")
    try:
        subject = Subject(kind)
    except ValueError:
        raise ValueError(
            "must be transfer, collection, statement_line, or one subject as transfer:REFERENCE"
        ) from None
    if colon and not reference:
        raise ValueError("names no reference after the colon")
    return subject, reference if colon else None


def parse_event_cursor(cursor: str) -> int:
    """The event row id inside a cursor this API gave out; ValueError otherwise."""
    return decode_cursor(cursor, kind=EVENT_CURSOR)


def event_summary(event: RelayEvent) -> dict[str, Any]:
    """An event as a listing shows it: its body's fields and what it is about."""
    body = orjson.loads(event.body)
    return {
        "id": event.event_id,
        "type": event.type,
        "subject": event.subject,
        "reference": event.reference,
        "sequence": event.sequence,
        "timestamp": body.get("timestamp"),
        "created_at": iso(event.created_at),
        "data": body.get("data"),
    }


def list_events(session: Session, query: EventQuery) -> EventPage:
    """Events newest first, filtered; keyset-paginated by row id so pages never shift."""
    limit = max(1, min(query.limit, MAX_PAGE))
    statement = select(RelayEvent).order_by(col(RelayEvent.id).desc())
    if query.type is not None:
        statement = statement.where(col(RelayEvent.type) == query.type.value)
    if query.subject is not None:
        statement = statement.where(col(RelayEvent.subject) == query.subject.value)
    if query.reference is not None:
        statement = statement.where(col(RelayEvent.reference) == query.reference)
    if query.since is not None:
        statement = statement.where(col(RelayEvent.created_at) >= query.since)
    if query.cursor is not None:
        statement = statement.where(col(RelayEvent.id) < query.cursor)
    rows = list(session.execute(statement.limit(limit + 1)).scalars())
    more = len(rows) > limit
    rows = rows[:limit]
    last = rows[-1].id if rows and more else None
    cursor = None if last is None else encode_cursor(last, kind=EVENT_CURSOR)
    return EventPage([event_summary(row) for row in rows], cursor)


def attempt_record(attempt: RelayAttempt, *, answers: bool = False) -> dict[str, Any]:
    """One recorded attempt; `response_head` (the first KiB of the consumer's answer) is null
    unless `answers` (admins only: docs/rules.md, Robustness rules)."""
    return {
        "id": attempt.id,
        "attempted_at": iso(attempt.attempted_at),
        "duration_ms": attempt.duration_ms,
        "status_code": attempt.status_code,
        "error": attempt.error,
        "response_head": attempt.response_head if answers else None,
        "outcome": attempt.outcome,
    }


def delivery_record(
    delivery: RelayDelivery, attempts: list[RelayAttempt] | None = None, *, answers: bool = False
) -> dict[str, Any]:
    """One delivery, with its attempts oldest first when they are given (`answers`: with the
    first KiB of each answer, for admins)."""
    record: dict[str, Any] = {
        "id": delivery.id,
        "endpoint_id": delivery.endpoint_id,
        "status": delivery.status,
        "attempt_count": delivery.attempts,
        "next_attempt_at": iso(delivery.next_attempt_at),
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "delivered_at": iso(delivery.delivered_at),
        "created_at": iso(delivery.created_at),
        "updated_at": iso(delivery.updated_at),
    }
    if attempts is not None:
        record["attempts"] = [attempt_record(a, answers=answers) for a in attempts]
    return record


def event_record(session: Session, event_id: str, *, answers: bool = False) -> dict[str, Any]:
    """The event `evt_…` with its deliveries and each delivery's attempts (`answers`: with the
    first KiB of each consumer's answer, which only admins read); EndpointNotFoundError when
    there is no such event."""
    event = None
    if EVENT_ID.match(event_id):
        event = session.execute(
            select(RelayEvent).where(col(RelayEvent.event_id) == event_id)
        ).scalar_one_or_none()
    if event is None:
        raise EndpointNotFoundError(f"no event {event_id!r}")
    deliveries = list(
        session.execute(
            select(RelayDelivery)
            .where(col(RelayDelivery.event_id) == event.id)
            .order_by(col(RelayDelivery.id))
        ).scalars()
    )
    attempts: dict[int, list[RelayAttempt]] = {d.id: [] for d in deliveries if d.id is not None}
    if attempts:
        for attempt in session.execute(
            select(RelayAttempt)
            .where(col(RelayAttempt.delivery_id).in_(list(attempts)))
            .order_by(col(RelayAttempt.id))
        ).scalars():
            attempts[attempt.delivery_id].append(attempt)
    return {
        **event_summary(event),
        "deliveries": [
            delivery_record(d, attempts.get(d.id or 0, []), answers=answers) for d in deliveries
        ],
    }


def retry_delivery(session: Session, delivery_id: int, *, now: dt.datetime) -> dict[str, Any]:
    """Make a pending or failed delivery due now; a failed one is pending again with the whole
    retry schedule ahead of it. EndpointNotFoundError when there is no such delivery,
    DeliveryStateError when it was delivered already or its endpoint was removed."""
    delivery = session.execute(
        select(RelayDelivery).where(col(RelayDelivery.id) == delivery_id).with_for_update()
    ).scalar_one_or_none()
    if delivery is None:
        raise EndpointNotFoundError(f"no delivery {delivery_id}")
    if delivery.status == DeliveryStatus.DELIVERED.value:
        raise DeliveryStateError(f"delivery {delivery_id} was delivered already")
    endpoint = session.get(RelayEndpoint, delivery.endpoint_id)
    if endpoint is None or endpoint.removed_at is not None:
        # A removed endpoint gets nothing more: a retry would sit pending forever.
        raise DeliveryStateError(f"delivery {delivery_id} is for a removed endpoint")
    if delivery.status == DeliveryStatus.FAILED.value:
        delivery.status = DeliveryStatus.PENDING.value
        delivery.attempts = 0
    # A claim in force is left alone: the worker holding it finishes its attempt first.
    delivery.next_attempt_at = now
    delivery.updated_at = now
    session.flush()
    return delivery_record(delivery)


@dataclass(frozen=True)
class RelayFigures:
    """What `/metrics` shows of the relay, read from the ledger at scrape time."""

    pending: int
    oldest_pending_seconds: float
    attempts: dict[str, int]


def relay_figures(session: Session, *, now: dt.datetime) -> RelayFigures:
    """Pending deliveries (of endpoints not removed), the age of the oldest, and every
    recorded attempt counted by outcome."""
    pending, oldest = session.execute(
        select(func.count(), func.min(col(RelayDelivery.created_at)))
        .select_from(RelayDelivery)
        .join(RelayEndpoint, col(RelayEndpoint.id) == col(RelayDelivery.endpoint_id))
        .where(
            col(RelayDelivery.status) == DeliveryStatus.PENDING.value,
            col(RelayEndpoint.removed_at).is_(None),
        )
    ).one()
    attempts = {
        str(outcome): int(count)
        for outcome, count in session.execute(
            select(col(RelayAttempt.outcome), func.count()).group_by(col(RelayAttempt.outcome))
        ).all()
    }
    age = 0.0 if oldest is None else max(0.0, (now - oldest).total_seconds())
    return RelayFigures(pending=int(pending), oldest_pending_seconds=age, attempts=attempts)


def recent_deliveries(
    session: Session, endpoint_id: int, *, limit: int = 10
) -> list[tuple[RelayDelivery, RelayEvent]]:
    """The endpoint's newest deliveries, each with its event (for the console)."""
    rows = session.execute(
        select(RelayDelivery, RelayEvent)
        .join(RelayEvent, col(RelayEvent.id) == col(RelayDelivery.event_id))
        .where(col(RelayDelivery.endpoint_id) == endpoint_id)
        .order_by(col(RelayDelivery.id).desc())
        .limit(limit)
    ).all()
    return [(delivery, event) for delivery, event in rows]
