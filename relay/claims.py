"""Claim due deliveries for one worker: the first step of claim → send → record.

A delivery is due when it is pending, its next attempt time has come, nobody holds a live
claim on it, its endpoint is enabled and not removed, and (the order rule, PRODUCT.md: Relay)
no earlier event of its subject is still pending to that endpoint. A claim stamps
`claimed_by`/`claimed_until` and commits before anything is sent: on PostgreSQL the rows are
picked with `FOR UPDATE SKIP LOCKED`, so two workers never claim one row; on SQLite one worker
holds the `relay` lease (ledger.lease) and BEGIN IMMEDIATE serialises claims anyway. A worker
killed mid-attempt leaves claims that expire (`claimed_until`) and become due again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlmodel import Session

from ledger.events.outbox import DELIVERIES, ENDPOINTS, EVENTS
from ledger.events.types import DeliveryStatus
from ledger.models import RelayEndpoint

# The name of the SQLite runner lease of the relay worker.
RELAY_LEASE = "relay"

_PENDING = DeliveryStatus.PENDING.value


@dataclass(frozen=True, slots=True)
class Job:
    """One claimed delivery: what the sender needs, and what the recorder writes back."""

    delivery_id: int
    attempts: int  # attempts made before this one
    endpoint: RelayEndpoint
    event_id: str
    body: str
    subject_key: str
    sequence: int
    claimed_until: dt.datetime  # the worker may not start an attempt that would outlast it


def _first_pending() -> ColumnElement[bool]:
    # The order rule as "this is the lowest pending sequence of its (endpoint, subject)": a
    # correlated subquery read through ix_relay_delivery_order for each candidate, so the due
    # scan stops at `limit` (a NOT EXISTS became an anti-join over every pending row when
    # PostgreSQL's statistics were stale, as they are after a burst of events).
    earlier = DELIVERIES.alias("earlier")
    first = (
        select(func.min(earlier.c.sequence))
        .where(
            earlier.c.endpoint_id == DELIVERIES.c.endpoint_id,
            earlier.c.subject_key == DELIVERIES.c.subject_key,
            earlier.c.status == _PENDING,
        )
        .scalar_subquery()
    )
    is_first: ColumnElement[bool] = DELIVERIES.c.sequence == first
    return is_first


def _sendable(now: dt.datetime) -> ColumnElement[bool]:
    # Every condition of "due" except the time: also the next-due probe's filter.
    return and_(
        DELIVERIES.c.status == _PENDING,
        or_(DELIVERIES.c.claimed_until.is_(None), DELIVERIES.c.claimed_until < now),
        ENDPOINTS.c.enabled.is_(True),
        ENDPOINTS.c.removed_at.is_(None),
        _first_pending(),
    )


def claim(
    session: Session,
    *,
    owner: str,
    now: dt.datetime,
    ttl: float,
    limit: int,
    due_by: dt.datetime | None = None,
) -> list[Job]:
    """Claim up to `limit` due deliveries (oldest due first) for `ttl` seconds; their jobs.

    `due_by` (default `now`) is the latest next-attempt time taken: `relay once` passes its
    start, so retries it schedules itself are left for a later run.
    """
    statement = (
        select(DELIVERIES.c.id)
        .select_from(DELIVERIES.join(ENDPOINTS, ENDPOINTS.c.id == DELIVERIES.c.endpoint_id))
        .where(DELIVERIES.c.next_attempt_at <= (due_by or now), _sendable(now))
        # next_attempt_at alone: the order of ix_relay_delivery_due, so no sort of every due row.
        .order_by(DELIVERIES.c.next_attempt_at)
        .limit(limit)
        .with_for_update(skip_locked=True, of=DELIVERIES)
    )
    ids = [int(row) for row in session.execute(statement).scalars()]
    if not ids:
        return []
    until = now + dt.timedelta(seconds=ttl)
    session.execute(
        update(DELIVERIES)
        .where(DELIVERIES.c.id.in_(ids))
        .values(claimed_by=owner, claimed_until=until)
    )
    rows = session.execute(
        select(
            DELIVERIES.c.id,
            DELIVERIES.c.attempts,
            DELIVERIES.c.endpoint_id,
            EVENTS.c.event_id,
            EVENTS.c.body,
            DELIVERIES.c.subject_key,
            DELIVERIES.c.sequence,
        )
        .join(EVENTS, EVENTS.c.id == DELIVERIES.c.event_id)
        .where(DELIVERIES.c.id.in_(ids))
        .order_by(DELIVERIES.c.next_attempt_at, DELIVERIES.c.id)
    ).all()
    endpoint_ids = {row.endpoint_id for row in rows}
    endpoints = {
        endpoint.id: endpoint
        for endpoint in session.execute(
            select(RelayEndpoint).where(RelayEndpoint.id.in_(endpoint_ids))  # type: ignore[union-attr]
        ).scalars()
    }
    return [
        Job(
            delivery_id=row.id,
            attempts=row.attempts,
            endpoint=endpoints[row.endpoint_id],
            event_id=row.event_id,
            body=row.body,
            subject_key=row.subject_key,
            sequence=row.sequence,
            claimed_until=until,
        )
        for row in rows
    ]


def release(session: Session, *, owner: str, delivery_ids: list[int]) -> None:
    """Give up claims this worker holds and will not use (a stop with claimed deliveries not
    yet sent): they are due again at once instead of when the claims expire."""
    if delivery_ids:
        session.execute(
            update(DELIVERIES)
            .where(DELIVERIES.c.id.in_(delivery_ids), DELIVERIES.c.claimed_by == owner)
            .values(claimed_by=None, claimed_until=None)
        )


def next_due(session: Session, *, now: dt.datetime) -> dt.datetime | None:
    """When the next pending delivery that is not due yet falls due (None: none waits)."""
    value: dt.datetime | None = session.execute(
        select(func.min(DELIVERIES.c.next_attempt_at))
        .select_from(DELIVERIES.join(ENDPOINTS, ENDPOINTS.c.id == DELIVERIES.c.endpoint_id))
        .where(DELIVERIES.c.next_attempt_at > now, _sendable(now))
    ).scalar_one_or_none()
    return value


def pending_count(session: Session) -> int:
    """Deliveries still pending (any endpoint)."""
    return int(
        session.execute(
            select(func.count()).select_from(DELIVERIES).where(DELIVERIES.c.status == _PENDING)
        ).scalar_one()
    )
