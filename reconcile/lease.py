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

from sqlalchemy import or_, select, update
from sqlmodel import Session, col

import ledger.errors
from ledger.lease import hold_lease, new_owner, release_lease
from ledger.models import Transfer
from reconcile.errors import LeaseHeldError

__all__ = ["claim_due", "hold_runner_lease", "new_owner", "release_runner_lease"]

RUNNER_LEASE = "reconciler"


def hold_runner_lease(session: Session, *, owner: str, now: dt.datetime, ttl: float) -> dt.datetime:
    """Take or renew the runner lease; its new expiry. LeaseHeldError when someone else holds it."""
    try:
        return hold_lease(session, RUNNER_LEASE, owner=owner, now=now, ttl=ttl)
    except ledger.errors.LeaseHeldError as exc:
        raise LeaseHeldError(exc.owner, exc.until) from None


def release_runner_lease(session: Session, *, owner: str) -> None:
    """Give the runner lease up (only if we hold it)."""
    release_lease(session, RUNNER_LEASE, owner=owner)


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
