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

import orjson
from sqlalchemy import (
    ColumnElement,
    Integer,
    Update,
    and_,
    bindparam,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Dialect
from sqlmodel import Session

from ledger.bulk import Bulk, Statement
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
def _claim_statement() -> Update:
    """The claim's statement, built on first use with bound parameters: building the
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
    return stamp


@functools.cache
def _stamp_sql(dialect: Dialect) -> tuple[str, tuple[str, ...] | None, dict[str, Any]]:
    """The claim's UPDATE as the dialect's driver takes it: its text, the order of its
    positional parameters (None: named), and the values the statement itself fixes."""
    compiled = _claim_statement().compile(dialect=dialect)
    order = tuple(compiled.positiontup or ()) if compiled.positional else None
    ours = dict.fromkeys(("due_by", "now", "limit", "owner", "until"))
    return compiled.string, order, dict(compiled.construct_params(ours))


@functools.cache
def _bodies_sql(postgres: bool) -> str:
    """The claimed events' ids, types, bodies and trace contexts, for ids given as one JSON
    array (its text is the same for any number of ids)."""
    ids = (
        "id = ANY(ARRAY(SELECT json_array_elements_text(%s::json)::bigint))"
        if postgres
        else "id IN (SELECT value FROM json_each(?))"
    )
    return f"SELECT id, event_id, type, body, traceparent FROM {EVENTS.name} WHERE {ids}"  # noqa: S608


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
    # The statements go to the driver (ledger.bulk): a claim holds up to a thousand rows, and
    # SQLAlchemy's processing of each returned row cost more than the database's own work.
    connection = session.connection()
    bulk = Bulk(connection)
    sql, order, fixed = _stamp_sql(_dialect_key(connection.dialect))
    until = now + dt.timedelta(seconds=ttl)
    values = {
        **fixed,
        "due_by": bulk.time(due_by or now),
        "now": bulk.time(now),
        "limit": limit,
        "owner": owner,
        "until": bulk.time(until),
    }
    statements = []
    if bulk.postgres:
        # Statistics lag a burst of events (autovacuum has not analysed the new rows), and
        # then the planner read every pending row in a bitmap, tested the order rule on each
        # and sorted them all: 22 ms a claim at 10,000 pending. Read in order, the due index
        # stops at `limit` (1.5 ms). For this transaction only.
        statements.append(Statement("SET LOCAL enable_bitmapscan = off", ()))
    parameters = tuple(values[name] for name in order) if order is not None else values
    statements.append(Statement(sql, parameters, returns_rows=True))
    rows = bulk.send(statements)[-1]
    if not rows:
        return []
    # RETURNING comes in no promised order: the oldest due first, as selected (the driver's
    # value of next_attempt_at sorts as the time does: a datetime, or SQLite's fixed-width text).
    claimed = sorted(map(tuple, rows), key=lambda row: (row[6], row[0]))
    event_ids = orjson.dumps(sorted({row[3] for row in claimed})).decode()
    events = {
        row[0]: row[1:]
        for row in bulk.send(
            [Statement(_bodies_sql(bulk.postgres), (event_ids,), returns_rows=True)]
        )[0]
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


_DIALECTS: dict[tuple[str, str], Dialect] = {}


def _dialect_key(dialect: Dialect) -> Dialect:
    # One compiled statement per kind of database and driver, not per engine (tests and
    # commands make many engines; each has its own dialect object).
    return _DIALECTS.setdefault((dialect.name, str(dialect.paramstyle)), dialect)


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
