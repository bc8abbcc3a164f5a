"""Write an event, and its deliveries, in the caller's transaction (the transactional outbox).

Whoever changes the ledger calls `emit` before committing: the change and its event commit
together or not at all. The subject's `sequence` is raised under the subject row's lock, so
two processes writing events about one transfer never hand out the same number and commit in
sequence order. Deliveries are made at once for every enabled endpoint that takes the type,
so the worker's only job is claim → send → record. On PostgreSQL a NOTIFY, sent by the
database at commit, wakes idle workers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, text, update
from sqlmodel import Session

from ledger.events import payloads, trace
from ledger.events.ids import new_event_id
from ledger.events.types import DeliveryStatus, RelayEventType, Subject, parse_types
from ledger.models import RelayDelivery, RelayEndpoint, RelayEvent
from ledger.subjects import SUBJECT_MODELS
from ledger.subjects import subject_key as subject_key  # the relay's order key

# The channel idle workers LISTEN on (PostgreSQL).
CHANNEL = "payrecon_relay"

EVENTS = RelayEvent.__table__  # type: ignore[attr-defined]
DELIVERIES = RelayDelivery.__table__  # type: ignore[attr-defined]
ENDPOINTS = RelayEndpoint.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Subscriber:
    """An enabled endpoint and the event types it takes."""

    id: int
    types: frozenset[RelayEventType]


def subscribers(session: Session) -> list[Subscriber]:
    """The endpoints new events are delivered to: enabled and not removed."""
    rows = session.execute(
        select(ENDPOINTS.c.id, ENDPOINTS.c.event_types).where(
            ENDPOINTS.c.enabled.is_(True), ENDPOINTS.c.removed_at.is_(None)
        )
    ).all()
    return as_subscribers(rows)


# `subscribers` as plain SQL, for a bulk writer that reads it in its own round trip
# (ledger.bulk); `as_subscribers` reads its rows.
SUBSCRIBERS_SQL = "SELECT id, event_types FROM relay_endpoint WHERE enabled AND removed_at IS NULL"


def as_subscribers(rows: Iterable[Sequence[Any]]) -> list[Subscriber]:
    """The subscribers of SUBSCRIBERS_SQL's rows."""
    return [Subscriber(int(row[0]), parse_types(row[1])) for row in rows]


def takers(endpoints: Iterable[Subscriber], type: RelayEventType) -> list[int]:
    """Ids of the endpoints that take events of `type`."""
    return [endpoint.id for endpoint in endpoints if type in endpoint.types]


def next_sequence(session: Session, subject: Subject, subject_id: int) -> int:
    """Raise the subject's event sequence and return it; the row stays locked until commit."""
    table = SUBJECT_MODELS[subject].__table__  # type: ignore[union-attr]
    return int(
        session.execute(
            update(table)
            .where(table.c.id == subject_id)
            .values(event_sequence=table.c.event_sequence + 1)
            .returning(table.c.event_sequence)
        ).scalar_one()
    )


def delivery_rows(
    event_row_id: int,
    endpoint_ids: Sequence[int],
    *,
    key: str,
    sequence: int,
    now: Any,
) -> list[dict[str, Any]]:
    """The pending delivery rows of one event, one per endpoint, due at `now`."""
    return [
        {
            "event_id": event_row_id,
            "endpoint_id": endpoint_id,
            "subject_key": key,
            "sequence": sequence,
            "status": DeliveryStatus.PENDING.value,
            "attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
            "updated_at": now,
        }
        for endpoint_id in endpoint_ids
    ]


def emit(
    session: Session,
    *,
    type: RelayEventType,
    subject: Subject,
    subject_id: int,
    reference: str,
    data: dict[str, Any],
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> str:
    """Record one event and its deliveries in the session's transaction; its `evt_` id.

    `endpoints` (from `subscribers`) saves the read when the caller emits many events in one
    transaction. The event keeps the trace context it is written in (`ledger.events.trace`).
    """
    sequence = next_sequence(session, subject, subject_id)
    event_id = new_event_id()
    body = payloads.body(event_id=event_id, type=type, timestamp=now, sequence=sequence, data=data)
    row_id = session.execute(
        insert(EVENTS)
        .values(
            event_id=event_id,
            type=type.value,
            subject=subject.value,
            subject_id=subject_id,
            reference=reference,
            sequence=sequence,
            body=body,
            created_at=now,
            traceparent=trace.current(),
        )
        .returning(EVENTS.c.id)
    ).scalar_one()
    targets = takers(subscribers(session) if endpoints is None else endpoints, type)
    if targets:
        key = subject_key(subject, reference)
        session.execute(
            insert(DELIVERIES), delivery_rows(row_id, targets, key=key, sequence=sequence, now=now)
        )
        wake_workers(session)
    return event_id


@dataclass(frozen=True, slots=True)
class NewEvent:
    """One event for `emit_many`: its type, subject, the subject's reference and data."""

    type: RelayEventType
    subject: Subject
    subject_id: int
    reference: str
    data: dict[str, Any]


def next_sequences(session: Session, wanted: Sequence[tuple[Subject, int]]) -> list[int]:
    """`next_sequence` for each of `wanted` (a subject may come several times: it gets
    consecutive numbers in that order), in a few statements: the subject rows are locked in id
    order first (as many writers lock them, so no two deadlock), then raised by their count."""
    counts: dict[tuple[Subject, int], int] = {}
    for key in wanted:
        counts[key] = counts.get(key, 0) + 1
    last: dict[tuple[Subject, int], int] = {}
    for subject, model in SUBJECT_MODELS.items():
        table = model.__table__  # type: ignore[union-attr]
        mine = {key[1]: n for key, n in counts.items() if key[0] == subject}
        if not mine:
            continue
        session.execute(
            select(table.c.id)
            .where(table.c.id.in_(sorted(mine)))
            .order_by(table.c.id)
            .with_for_update()
        ).all()
        for n in sorted(set(mine.values())):
            ids = sorted(i for i, count in mine.items() if count == n)
            raised = session.execute(
                update(table)
                .where(table.c.id.in_(ids))
                .values(event_sequence=table.c.event_sequence + n)
                .returning(table.c.id, table.c.event_sequence)
            ).all()
            last.update({(subject, int(i)): int(seq) for i, seq in raised})
    given: dict[tuple[Subject, int], int] = {}
    sequences = []
    for key in wanted:
        given[key] = given.get(key, 0) + 1
        sequences.append(last[key] - counts[key] + given[key])
    return sequences


def emit_many(
    session: Session,
    events: Sequence[NewEvent],
    *,
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> list[str]:
    """`emit` for many events in one transaction, with a few statements instead of a few per
    event (a bulk acknowledgement writes thousands): the same rows, sequences and deliveries
    as `emit` one by one in this order. Their `evt_` ids."""
    if not events:
        return []
    sequences = next_sequences(session, [(e.subject, e.subject_id) for e in events])
    event_ids = [new_event_id() for _ in events]
    rows = [
        {
            "event_id": event_id,
            "type": event.type.value,
            "subject": event.subject.value,
            "subject_id": event.subject_id,
            "reference": event.reference,
            "sequence": sequence,
            "body": payloads.body(
                event_id=event_id,
                type=event.type,
                timestamp=now,
                sequence=sequence,
                data=event.data,
            ),
            "created_at": now,
        }
        for event, event_id, sequence in zip(events, event_ids, sequences, strict=True)
    ]
    row_ids = list(
        session.execute(
            insert(EVENTS).returning(EVENTS.c.id, sort_by_parameter_order=True), rows
        ).scalars()
    )
    endpoints = subscribers(session) if endpoints is None else endpoints
    deliveries: list[dict[str, Any]] = []
    for event, row_id, sequence in zip(events, row_ids, sequences, strict=True):
        targets = takers(endpoints, event.type)
        if targets:
            key = subject_key(event.subject, event.reference)
            deliveries += delivery_rows(row_id, targets, key=key, sequence=sequence, now=now)
    if deliveries:
        session.execute(insert(DELIVERIES), deliveries)
        wake_workers(session)
    return event_ids


def wake_workers(session: Session) -> None:
    """Ask PostgreSQL to wake idle workers when this transaction commits (SQLite: they poll)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": CHANNEL})
