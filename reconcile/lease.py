"""Who may check what: the SQLite runner lease and per-transfer claims (PostgreSQL).

On PostgreSQL several reconcilers share the work: each claims a batch of due
rows with `SELECT … FOR UPDATE SKIP LOCKED`, stamps `lease_owner`/`lease_until`
and commits before any lookup, so no transfer is checked by two of them in one
round. On SQLite one runner holds the named row `reconciler` of the `lease`
table (renewed while it runs); the same claims are made too (BEGIN IMMEDIATE
serialises them), so the code path is one.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import uuid

from sqlalchemy import or_, select, update
from sqlmodel import Session, col

from ledger.models import Lease, Transfer
from ledger.upsert import insert_ignore
from reconcile.errors import LeaseHeldError

RUNNER_LEASE = "reconciler"


def new_owner() -> str:
    """A name for this reconciler: host, pid and a random tag (fits lease_owner's 64)."""
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def hold_runner_lease(session: Session, *, owner: str, now: dt.datetime, ttl: float) -> dt.datetime:
    """Take or renew the runner lease; its new expiry. LeaseHeldError when someone else holds it."""
    until = now + dt.timedelta(seconds=ttl)
    insert_ignore(
        session,
        Lease.__table__,  # type: ignore[attr-defined]
        {"name": RUNNER_LEASE, "owner": owner, "expires_at": until},
        ["name"],
    )
    lease = session.execute(
        select(Lease).where(col(Lease.name) == RUNNER_LEASE).with_for_update()
    ).scalar_one()
    if lease.owner != owner and lease.expires_at > now:
        raise LeaseHeldError(lease.owner, lease.expires_at.isoformat())
    lease.owner = owner
    lease.expires_at = until
    return until


def release_runner_lease(session: Session, *, owner: str) -> None:
    """Give the runner lease up (only if we hold it)."""
    lease = session.get(Lease, RUNNER_LEASE)
    if lease is not None and lease.owner == owner:
        session.delete(lease)


def claim_due(
    session: Session,
    *,
    owner: str,
    now: dt.datetime,
    pass_started: dt.datetime,
    ttl: float,
    limit: int,
) -> list[int]:
    """Claim up to `limit` due transfers not yet checked in this pass; their ids.

    Due is `next_check_at <= now` (the `ix_transfer_due` index: O(due)). A transfer
    checked at or after `pass_started` is skipped, so even with zero backoff no
    transfer is looked up twice in one pass; one leased (by a peer, or by this pass
    in a chunk not yet applied) is skipped until its lease expires.
    """
    statement = (
        select(col(Transfer.id))
        .where(
            col(Transfer.next_check_at) <= now,
            or_(
                col(Transfer.last_checked_at).is_(None),
                col(Transfer.last_checked_at) < pass_started,
            ),
            or_(col(Transfer.lease_until).is_(None), col(Transfer.lease_until) < now),
        )
        .order_by(col(Transfer.next_check_at))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    ids = [int(row) for row in session.execute(statement).scalars()]
    if ids:
        session.execute(
            update(Transfer)
            .where(col(Transfer.id).in_(ids))
            .values(lease_owner=owner, lease_until=now + dt.timedelta(seconds=ttl))
        )
    return ids
