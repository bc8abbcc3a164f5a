"""Pruning old provider checks (docs/rules.md: PAYRECON_CHECKS_KEEP_DAYS)."""

from __future__ import annotations

import datetime as dt

from sqlmodel import Session

from admin.actions.actor import Actor, audit
from ledger.audit import AuditAction
from ledger.checks import prune_checks

# Rows deleted per transaction, so a first prune of a big ledger never holds one huge lock.
PRUNE_BATCH = 10_000


def prune_batch(
    session: Session, actor: Actor, *, keep_days: int, now: dt.datetime, batch: int = PRUNE_BATCH
) -> int:
    """Delete up to `batch` checks of settled subjects older than `keep_days`; how many.

    One audit row per batch, in the batch's transaction: a prune cut short by a crash is
    audited as far as it went (and a run deleting nothing still leaves a row)."""
    deleted = prune_checks(session, keep_days=keep_days, now=now, batch=batch)
    detail = f"deleted {deleted} provider checks older than {keep_days} days"
    audit(session, actor, AuditAction.CHECKS_PRUNE, None, detail, now=now)
    return deleted
