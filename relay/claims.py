"""Claim due deliveries for one worker: the first step of claim → send → record.

A delivery is due when it is pending, its next attempt time has come, nobody holds a live
claim on it, its endpoint is enabled and not removed, and (the order rule, docs/rules.md: Relay)
no earlier event of its subject is still pending to that endpoint. A claim stamps
`claimed_by`/`claimed_until` and commits before anything is sent: on PostgreSQL the rows are
picked with `FOR UPDATE SKIP LOCKED`, so two workers never claim one row; on SQLite one worker
holds the `relay` lease (ledger.lease) and BEGIN IMMEDIATE serialises claims anyway. A worker
killed mid-attempt leaves claims that expire (`claimed_until`) and become due again.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    Update,
    and_,
    bindparam,
    func,
    or_,
    select,
    text,
    update,
)
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
    traceparent: str | None = None  # the trace the event was written in (tracing was on)
    event_type: str | None = None  # the event's type (its body's `type`), read with the body


def _first_pending(candidate: Any) -> ColumnElement[bool]:
    # The order rule as "this is the lowest pending sequence of its (endpoint, subject)": a
    # correlated subquery read through ix_relay_delivery_order for each candidate, so the due
    # scan stops at `limit` (a NOT EXISTS became an anti-join over every pending row when
    # PostgreSQL's statistics were stale, as they are after a burst of events).
    earlier = DELIVERIES.alias("earlier")
    first = (
        select(func.min(earlier.c.sequence))
        .where(
            earlier.c.endpoint_id == candidate.c.endpoint_id,
            earlier.c.subject_key == candidate.c.subject_key,
            earlier.c.status == _PENDING,
        )
        .scalar_subquery()
    )
    is_first: ColumnElement[bool] = candidate.c.sequence == first
    return is_first


def _sendable(candidate: Any, now: Any) -> ColumnElement[bool]:
    # Every condition of "due" except the time: also the next-due probe's filter.
    return and_(
        candidate.c.status == _PENDING,
        or_(candidate.c.claimed_until.is_(None), candidate.c.claimed_until < now),
        ENDPOINTS.c.enabled.is_(True),
        ENDPOINTS.c.removed_at.is_(None),
        _first_pending(candidate),
    )


@functools.cache
def _claim_statements() -> tuple[Update, Select[Any]]:
    """The claim's statements, built on first use with bound parameters: building the
    expressions anew cost about 1.5 ms a claim, more than running them on SQLite."""
    # One statement picks and stamps the rows (UPDATE ... WHERE id IN (SELECT ... FOR UPDATE
    # SKIP LOCKED) RETURNING): the worker's per-claim round trips are what it pays beyond a
    # bare HTTP client (bench/RESULTS.md, section 5). The candidates' own alias keeps the
    # subquery from being correlated with the table being updated.
    due = DELIVERIES.alias("due")
    candidates = (
        select(due.c.id)
        .select_from(due.join(ENDPOINTS, ENDPOINTS.c.id == due.c.endpoint_id))
        .where(due.c.next_attempt_at <= bindparam("due_by"), _sendable(due, bindparam("now")))
        # next_attempt_at alone: the order of ix_relay_delivery_due, so no sort of every due row.
        .order_by(due.c.next_attempt_at)
        .limit(bindparam("limit", type_=Integer))
        .with_for_update(skip_locked=True, of=due)
    )
    stamp = (
        update(DELIVERIES)
        .where(DELIVERIES.c.id.in_(candidates.scalar_subquery()))
        .values(claimed_by=bindparam("owner"), claimed_until=bindparam("until"))
        .returning(
            DELIVERIES.c.id,
            DELIVERIES.c.attempts,
            DELIVERIES.c.endpoint_id,
            DELIVERIES.c.event_id,
            DELIVERIES.c.subject_key,
            DELIVERIES.c.sequence,
            DELIVERIES.c.next_attempt_at,
        )
    )
    bodies = select(
        EVENTS.c.id, EVENTS.c.event_id, EVENTS.c.type, EVENTS.c.body, EVENTS.c.traceparent
    ).where(EVENTS.c.id.in_(bindparam("ids", expanding=True)))
    return stamp, bodies


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
    stamp, bodies = _claim_statements()
    if session.get_bind().dialect.name == "postgresql":
        # Statistics lag a burst of events (autovacuum has not analysed the new rows), and
        # then the planner read every pending row in a bitmap, tested the order rule on each
        # and sorted them all: 22 ms a claim at 10,000 pending. Read in order, the due index
        # stops at `limit` (1.5 ms). For this transaction only.
        session.execute(text("SET LOCAL enable_bitmapscan = off"))
    until = now + dt.timedelta(seconds=ttl)
    rows = session.execute(
        stamp,
        {"due_by": due_by or now, "now": now, "limit": limit, "owner": owner, "until": until},
    ).all()
    if not rows:
        return []
    # RETURNING comes in no promised order: the oldest due first, as selected. Rows are read
    # as plain tuples: a claim holds up to a thousand, and named access per field cost more
    # than the statements on SQLite.
    claimed = sorted(map(tuple, rows), key=lambda row: (row[6], row[0]))
    events = {
        row[0]: row[1:]
        for row in session.execute(bodies, {"ids": sorted({row[3] for row in claimed})})
    }
    endpoints = {
        endpoint.id: endpoint
        for endpoint in session.execute(
            select(RelayEndpoint).where(
                RelayEndpoint.id.in_({row[2] for row in claimed})  # type: ignore[union-attr]
            )
        ).scalars()
    }
    jobs = []
    for delivery_id, attempts, endpoint_id, event_row, subject_key, sequence, _due in claimed:
        event_id, event_type, body, traceparent = events[event_row]
        jobs.append(
            Job(
                delivery_id,
                attempts,
                endpoints[endpoint_id],
                event_id,
                body,
                subject_key,
                sequence,
                until,
                traceparent,
                event_type,
            )
        )
    return jobs


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
        .where(DELIVERIES.c.next_attempt_at > now, _sendable(DELIVERIES, now))
    ).scalar_one_or_none()
    return value


def pending_count(session: Session) -> int:
    """Deliveries still pending (any endpoint)."""
    return int(
        session.execute(
            select(func.count()).select_from(DELIVERIES).where(DELIVERIES.c.status == _PENDING)
        ).scalar_one()
    )
