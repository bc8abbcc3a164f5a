"""Who may check what: the SQLite runner lease and per-row claims of transfers and collections.

On PostgreSQL several reconcilers share the work: each claims a batch of due
rows with `SELECT … FOR UPDATE SKIP LOCKED`, stamps `lease_owner`/`lease_until`
and commits before any lookup, so no transfer is checked by two of them in one
round. On SQLite one runner holds the named row `reconciler` of the `lease`
table (renewed while it runs); the same claims are made too (BEGIN IMMEDIATE
serialises them), so the code path is one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from sqlalchemy import Engine, or_, select, update
from sqlmodel import Session, col

import ledger.errors
from ledger.db import write_session
from ledger.lease import hold_lease, new_owner, release_lease
from ledger.models import Collection, Transfer
from reconcile.errors import LeaseHeldError
from reconcile.lookup import Target

__all__ = [
    "claim_due",
    "claim_targets",
    "hold_runner_lease",
    "new_owner",
    "release_runner_lease",
    "release_targets",
]

# What a pass checks: rows of either table, which share the columns claims use.
Checked = type[Transfer] | type[Collection]

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
    model: Checked = Transfer,
) -> list[int]:
    """Claim up to `limit` due rows of `model` not yet checked in this pass; their ids.

    Due is `next_check_at <= now` (the `ix_*_due` index: O(due)). A row
    checked at or after `pass_started` is skipped, so even with zero backoff no
    transfer is looked up twice in one pass; one leased (by a peer, or by this pass
    in a chunk not yet applied) is skipped until its lease expires.
    """
    statement = (
        select(col(model.id))
        .where(
            col(model.next_check_at) <= now,
            or_(
                col(model.last_checked_at).is_(None),
                col(model.last_checked_at) < pass_started,
            ),
            or_(col(model.lease_until).is_(None), col(model.lease_until) < now),
        )
        .order_by(col(model.next_check_at))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    ids = [int(row) for row in session.execute(statement).scalars()]
    if ids:
        session.execute(
            update(model)
            .where(col(model.id).in_(ids))
            .values(lease_owner=owner, lease_until=now + dt.timedelta(seconds=ttl))
        )
    return ids


def claim_targets(
    engine: Engine,
    model: Checked,
    *,
    owner: str,
    now: dt.datetime,
    started: dt.datetime,
    ttl: float,
    limit: int,
) -> list[Target]:
    """Claim due rows of `model` in a transaction of their own; each with the reference to look
    it up by (the provider's when known)."""
    with write_session(engine) as session:
        ids = claim_due(
            session, owner=owner, now=now, pass_started=started, ttl=ttl, limit=limit, model=model
        )
        if not ids:
            return []
        rows = session.execute(
            select(col(model.id), col(model.reference), col(model.provider_reference)).where(
                col(model.id).in_(ids)
            )
        ).all()
    return [Target(int(r[0]), r[2] or r[1]) for r in rows]


def release_targets(
    engine: Engine, model: Checked, targets: Sequence[Target], *, owner: str
) -> None:
    """Give up our claims on `targets` (a stopped pass): they are due again at once."""
    with write_session(engine) as session:
        for row in session.execute(
            select(model).where(col(model.id).in_([t.id for t in targets])).with_for_update()
        ).scalars():
            if row.lease_owner == owner:
                row.lease_owner = None
                row.lease_until = None
