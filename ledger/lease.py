"""Named leases: one holder at a time of a row of the `lease` table, until it expires.

SQLite has no row locks to share work by, so one runner of a kind (the reconciler, the relay
worker) holds its named lease while it works and renews it; a crashed holder's lease expires
and the next runner takes it.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import uuid

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.errors import LeaseHeldError
from ledger.models import Lease
from ledger.upsert import insert_ignore


def new_owner() -> str:
    """A name for this runner: host, pid and a random tag (fits the 64 of an owner column)."""
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def hold_lease(
    session: Session, name: str, *, owner: str, now: dt.datetime, ttl: float
) -> dt.datetime:
    """Take or renew lease `name`; its new expiry. LeaseHeldError when someone else holds it."""
    until = now + dt.timedelta(seconds=ttl)
    lease = _locked_row(session, name, owner=owner, expires_at=until)
    if lease.owner != owner and lease.expires_at > now:
        raise LeaseHeldError(name, lease.owner, lease.expires_at.isoformat())
    lease.owner = owner
    lease.expires_at = until
    return until


def _locked_row(session: Session, name: str, *, owner: str, expires_at: dt.datetime) -> Lease:
    """Row `name` of the lease table, made with these values if it was missing, locked until
    the transaction ends."""
    insert_ignore(
        session,
        Lease.__table__,  # type: ignore[attr-defined]
        {"name": name, "owner": owner, "expires_at": expires_at},
        ["name"],
    )
    lease: Lease = session.execute(
        select(Lease).where(col(Lease.name) == name).with_for_update()
    ).scalar_one()
    return lease


def release_lease(session: Session, name: str, *, owner: str) -> None:
    """Give lease `name` up (only if we hold it)."""
    lease = session.get(Lease, name)
    if lease is not None and lease.owner == owner:
        session.delete(lease)


# Not a lease: the row of this name records when the last reconcile pass ended (its
# `expires_at`) and who ran it, so every process's /metrics can show it (docs/operations.md,
# "Monitoring"). Kept in the lease table, whose rows are named facts of the runners, rather
# than in a table of its own.
LAST_PASS = "reconcile-last-pass"


def record_last_pass(session: Session, *, owner: str, now: dt.datetime) -> None:
    """Note that `owner` finished a reconcile pass at `now` (a later time never goes back)."""
    row = _locked_row(session, LAST_PASS, owner=owner, expires_at=now)
    if row.expires_at < now:
        row.owner = owner
        row.expires_at = now


def last_pass_at(session: Session) -> dt.datetime | None:
    """When the last reconcile pass ended, None before the first."""
    return session.execute(
        select(col(Lease.expires_at)).where(col(Lease.name) == LAST_PASS)
    ).scalar_one_or_none()
