"""Record what attempts came to: the last step of claim → send → record.

Every attempt becomes a `relay_attempt` row, whatever happened. The delivery moves on
(delivered, retried after the schedule's delay, or failed for good) only while this worker
still holds its claim: a worker that outlived its claim (a stalled database) records its
attempt but leaves the delivery to whoever claimed it next. The endpoint's bookkeeping
(last success, failing since) drives the auto-disable. What must be alerted comes back as
notices, sent by the caller after the commit.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
from sqlalchemy import update
from sqlmodel import Session

from ledger.bulk import Bulk, Statement, table_columns
from ledger.events.outbox import DELIVERIES, ENDPOINTS
from ledger.events.types import AttemptOutcome, DeliveryStatus
from ledger.models import RelayAttempt
from relay.claims import Job
from relay.schedule import next_delay
from relay.transport import RETRY_AFTER_STATUSES, Outcome

ATTEMPTS = RelayAttempt.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Result:
    """A job and what its attempt got."""

    job: Job
    answer: Outcome


@dataclass(frozen=True, slots=True)
class Notice:
    """An alert to send once: its unique key, title and plain-text body."""

    key: str
    title: str
    body: str
    kind: str = "relay"  # what groups notices of one batch (README "Alerts")
    name: str | None = None  # what it is about, for people: the endpoint's host


def verdict(
    attempts: int, answer: Outcome, schedule: tuple[float, ...]
) -> tuple[AttemptOutcome, float | None]:
    """What attempt number `attempts` (from 1) leads to, and the delay before the next one.

    Pure: a 2xx is delivered; otherwise the schedule's delay (at least a 429/503's
    Retry-After), or failed for good once the schedule is spent.
    """
    if answer.ok:
        return AttemptOutcome.DELIVERED, None
    retry_after = answer.retry_after if answer.status_code in RETRY_AFTER_STATUSES else None
    delay = next_delay(attempts, schedule, retry_after=retry_after)
    if delay is None:
        return AttemptOutcome.FAILED, None
    return AttemptOutcome.RETRY, delay


def describe(answer: Outcome) -> str:
    """One short phrase of what an attempt got: `HTTP 503`, `confirmed` or the error."""
    if answer.error is not None:
        return answer.error
    if answer.status_code is None:
        return "confirmed" if answer.confirmed else "no confirmation"
    return f"HTTP {answer.status_code}"


def _host(url: str) -> str:
    # Alerts name the host only: a URL's query may carry a consumer's token.
    return urlsplit(url).hostname or "?"


def record(
    session: Session,
    results: Sequence[Result],
    *,
    owner: str,
    schedule: tuple[float, ...],
    disable_after: float,
    now: dt.datetime,
) -> tuple[list[tuple[Result, AttemptOutcome]], list[Notice]]:
    """Write the attempts and move their deliveries and endpoints on; each result's outcome,
    and the alerts to send after the commit."""
    outcomes: list[tuple[Result, AttemptOutcome]] = []
    # The attempts' rows and the deliveries' moves go through the driver (ledger.bulk): on
    # PostgreSQL in one pipeline, and without SQLAlchemy's conversion of every parameter of
    # every row, which cost more than the database's own work (bench/RESULTS.md section 15).
    bulk = Bulk(session.connection())
    attempt_rows: list[tuple[Any, ...]] = []
    # Deliveries that move to the same values, moved by one statement: in a healthy run
    # every answer is a 200, so a batch of dozens is one UPDATE, not one per delivery.
    moves: dict[tuple[AttemptOutcome, float, int | None, str | None], list[int]] = {}
    for result in results:
        job, answer = result.job, result.answer
        outcome, delay = verdict(job.attempts + 1, answer, schedule)
        outcomes.append((result, outcome))
        attempt_rows.append(
            (
                job.delivery_id,
                bulk.time(answer.attempted_at),
                answer.duration_ms,
                answer.status_code,
                answer.error,
                answer.head,
                outcome.value,
            )
        )
        moves.setdefault(_move(answer, outcome, delay), []).append(job.delivery_id)
    inserts = bulk.insert(ATTEMPTS.name, table_columns(ATTEMPTS, _ATTEMPT_COLUMNS), attempt_rows)
    updates = [
        Statement(
            _move_sql(bulk.postgres),
            (*_moved_to(bulk, move, now), _id_set(ids), _PENDING, owner),
            returns_rows=True,
        )
        for move, ids in moves.items()
    ]
    # The endpoint's bookkeeping (drives the auto-disable): an endpoint with a success in the
    # batch gets its last success, and the first failure after it, in the same statements.
    last_ok, first_failure = _standing(results)
    succeeded = [
        Statement(
            _succeeded_sql(bulk.postgres),
            (bulk.time(last_ok[endpoint]), bulk.time(first_failure.get(endpoint)), endpoint),
        )
        for endpoint in sorted(last_ok)
    ]
    answered = bulk.send(inserts + updates + succeeded)
    # A delivery moves on only while this worker's claim holds: a peer that claimed it after
    # an expiry owns it now, and the row lock the UPDATE takes keeps the peer from changing
    # it under us. The ids the UPDATEs return are the deliveries moved.
    moved = {
        int(row[0]) for rows in answered[len(inserts) : len(inserts) + len(updates)] for row in rows
    }
    notices = [
        _failed_notice(result, now)
        for result, outcome in outcomes
        if outcome is AttemptOutcome.FAILED and result.job.delivery_id in moved
    ]
    failing = {e: when for e, when in first_failure.items() if e not in last_ok}
    notices += _failing(session, failing, disable_after=disable_after, now=now)
    return outcomes, notices


def _move(
    answer: Outcome, outcome: AttemptOutcome, delay: float | None
) -> tuple[AttemptOutcome, float, int | None, str | None]:
    # What a delivery moves to (_moved_to makes the UPDATE's values of it, once per group).
    return outcome, delay or 0.0, answer.status_code, answer.error


def _moved_to(
    bulk: Bulk, move: tuple[AttemptOutcome, float, int | None, str | None], now: dt.datetime
) -> tuple[Any, ...]:
    # The values of _move_sql's SET, in its order.
    outcome, delay, status_code, error = move
    status = {
        AttemptOutcome.DELIVERED: DeliveryStatus.DELIVERED,
        AttemptOutcome.FAILED: DeliveryStatus.FAILED,
        AttemptOutcome.RETRY: DeliveryStatus.PENDING,
    }[outcome]
    return (
        status.value,
        # A finished delivery has no next attempt; the column keeps when it ended.
        bulk.time(now + dt.timedelta(seconds=delay)),
        status_code,
        error,
        bulk.time(now if outcome is AttemptOutcome.DELIVERED else None),
        bulk.time(now),
    )


_PENDING = DeliveryStatus.PENDING.value

# The attempt row's columns, in the order record() writes them.
_ATTEMPT_COLUMNS = (
    "delivery_id",
    "attempted_at",
    "duration_ms",
    "status_code",
    "error",
    "response_head",
    "outcome",
)


@functools.cache
def _move_sql(postgres: bool) -> str:
    """The UPDATE moving a group of deliveries on, while this worker holds their claims; it
    returns the ids it moved. Its text is the same for any number of ids."""
    mark = "%s" if postgres else "?"
    # The ids as one JSON array (encoded by orjson in C, as ledger.bulk sends rows).
    ids = (
        "id = ANY(ARRAY(SELECT json_array_elements_text(%s::json)::bigint))"
        if postgres
        else "id IN (SELECT value FROM json_each(?))"
    )
    assigned = ", ".join(
        f"{name} = {mark}"
        for name in (
            "status",
            "next_attempt_at",
            "last_status_code",
            "last_error",
            "delivered_at",
            "updated_at",
        )
    )
    # The table's and columns' own names only: every value is a parameter.
    return (
        f"UPDATE {DELIVERIES.name} SET {assigned}, attempts = attempts + 1, "  # noqa: S608
        f"claimed_by = NULL, claimed_until = NULL "
        f"WHERE {ids} AND status = {mark} AND claimed_by = {mark} RETURNING id"
    )


def _id_set(ids: list[int]) -> str:
    return orjson.dumps(sorted(ids)).decode()


def _failed_notice(result: Result, now: dt.datetime) -> Notice:
    # One alert per endpoint and clock hour (UTC), not one per event: an endpoint down for a
    # day after the schedule is spent would otherwise page once for every event it missed.
    job = result.job
    attempts = job.attempts + 1
    host = _host(job.endpoint.url)
    return Notice(
        key=f"relay-delivery-failed:{job.endpoint.id}:{now:%Y-%m-%dT%H}",
        # Named by the transfer's or collection's reference (its subject key), not an id.
        title=f"payrecon relay: {host} did not take the event for {_named(job.subject_key)}",
        body=(
            f"The relay endpoint at {host} did not accept the event for "
            f"{_named(job.subject_key)} (event {job.event_id}) in {attempts} "
            f"attempts; the last got {describe(result.answer)}. The delivery is failed; "
            "other deliveries to this endpoint that fail within this hour are not alerted "
            "again (payrecon endpoints list and GET /api/events show them). After fixing the "
            "endpoint, queue them all again with: payrecon relay replay "
            f"--endpoint {job.endpoint.id} --failed-only"
        ),
        kind="relay_delivery_failed",
        name=host,
    )


def _named(subject_key: str) -> str:
    """`transfer:INV-1` → `transfer INV-1`: what an alert calls an event's subject."""
    noun, _, reference = subject_key.partition(":")
    return f"{noun} {reference}" if reference else subject_key


def _standing(
    results: Sequence[Result],
) -> tuple[dict[int, dt.datetime], dict[int, dt.datetime]]:
    """Per endpoint: the last success of the batch, and its first failure after that one (or
    the first of all when none succeeded)."""
    last_ok: dict[int, dt.datetime] = {}
    first_failure: dict[int, dt.datetime] = {}
    if all(result.answer.ok for result in results):
        # A healthy batch (nearly every one): the latest success per endpoint, no sort.
        for result in results:
            endpoint_id, when = int(result.job.endpoint.id or 0), result.answer.attempted_at
            if endpoint_id not in last_ok or when > last_ok[endpoint_id]:
                last_ok[endpoint_id] = when
        return last_ok, first_failure
    for result in sorted(results, key=lambda r: r.answer.attempted_at):
        endpoint_id = int(result.job.endpoint.id or 0)
        when = result.answer.attempted_at
        if result.answer.ok:
            last_ok[endpoint_id] = when
            first_failure.pop(endpoint_id, None)
        else:
            first_failure.setdefault(endpoint_id, when)
    return last_ok, first_failure


@functools.cache
def _succeeded_sql(postgres: bool) -> str:
    """The bookkeeping of an endpoint with a success in the batch (every batch of a healthy
    run): its last success, and the first failure after it (NULL: it is not failing)."""
    mark = "%s" if postgres else "?"
    return (
        f"UPDATE {ENDPOINTS.name} SET last_success_at = {mark}, failing_since = {mark} "  # noqa: S608
        f"WHERE id = {mark}"
    )


def _failing(
    session: Session, failing: dict[int, dt.datetime], *, disable_after: float, now: dt.datetime
) -> list[Notice]:
    # Endpoints whose every attempt of the batch failed: failing since their first failure
    # (unless already), and disabled once that is older than PAYRECON_RELAY_DISABLE_AFTER.
    notices = []
    for endpoint_id in sorted(failing):
        where = ENDPOINTS.c.id == endpoint_id
        session.execute(
            update(ENDPOINTS)
            .where(where, ENDPOINTS.c.failing_since.is_(None))
            .values(failing_since=failing[endpoint_id])
        )
        cutoff = now - dt.timedelta(seconds=disable_after)
        reason = f"every attempt failed for {disable_after:g} s (PAYRECON_RELAY_DISABLE_AFTER)"
        disabled = session.execute(
            update(ENDPOINTS)
            .where(
                where,
                ENDPOINTS.c.enabled.is_(True),
                ENDPOINTS.c.failing_since <= cutoff,
            )
            .values(enabled=False, disabled_reason=reason, updated_at=now)
            .returning(ENDPOINTS.c.failing_since, ENDPOINTS.c.url)
        ).first()
        if disabled is not None:
            notices.append(_disabled_notice(endpoint_id, disabled[0], disabled[1]))
    return notices


def _disabled_notice(endpoint_id: int, since: dt.datetime, url: str) -> Notice:
    host = _host(url)
    return Notice(
        key=f"relay-endpoint-disabled:{endpoint_id}:{int(since.timestamp())}",
        title=f"payrecon relay: endpoint {host} disabled",
        body=(
            f"Every attempt to the relay endpoint at {host} has failed since "
            f"{since.astimezone(dt.UTC):%Y-%m-%d %H:%M UTC}, so it was disabled; its events "
            f"wait. Fix it, then: payrecon endpoints enable {endpoint_id}"
        ),
        kind="relay_endpoint_disabled",
        name=host,
    )
