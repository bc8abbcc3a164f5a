"""`payrecon checks list|prune`: the provider checks the reconciler kept."""

from __future__ import annotations

import json

import click
from sqlalchemy.exc import DBAPIError, OperationalError

from ledger.audit import AuditAction
from ledger.checks import check_dict, list_checks, prune_checks
from ledger.db import read_session, write_session
from ledger.errors import DatabaseUnavailableError
from ledger.queries import find_transfer
from ledger.types import utcnow
from payrecon.actor import audit_cli
from payrecon.context import app_context, fail

# Rows deleted per transaction, so a first prune of a big ledger never holds one huge lock.
PRUNE_BATCH = 10_000


@click.group()
def checks() -> None:
    """The provider checks the reconciler kept: a transfer's, and pruning old ones."""


@checks.command("list")
@click.argument("reference")
@click.option("--limit", type=click.IntRange(1, 500), default=50, show_default=True)
@click.pass_context
def checks_list(ctx: click.Context, reference: str, limit: int) -> None:
    """The newest checks of the transfer REFERENCE (either reference), as JSON."""
    engine = app_context(ctx).engine(read_only=True)
    try:
        with read_session(engine) as session:
            transfer = find_transfer(session, reference)
            if transfer is None or transfer.id is None:
                fail(f"no transfer with reference {reference!r}")
            page = list_checks(session, transfer_id=transfer.id, limit=limit)
            items = [check_dict(c) for c in page.items]
    except (OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc.orig or exc}")
    click.echo(json.dumps(items, indent=2, ensure_ascii=False))


@checks.command("prune")
@click.pass_context
def checks_prune(ctx: click.Context) -> None:
    """Delete checks of settled transfers older than PAYRECON_CHECKS_KEEP_DAYS (default 400).

    Run it daily (cron or a systemd timer); pending transfers keep every check.
    """
    context = app_context(ctx)
    keep_days = context.settings().checks_keep_days
    engine = context.engine()
    now = utcnow()
    total = 0
    try:
        while True:
            with write_session(engine) as session:
                deleted = prune_checks(session, keep_days=keep_days, now=now, batch=PRUNE_BATCH)
                # One row per batch, in the batch's transaction: a prune cut short by a crash
                # is audited as far as it went (and a run deleting nothing still leaves a row).
                detail = f"deleted {deleted} provider checks older than {keep_days} days"
                audit_cli(session, AuditAction.CHECKS_PRUNE, None, detail, now=utcnow())
            total += deleted
            if deleted < PRUNE_BATCH:
                break
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")
    click.echo(f"pruned {total} provider checks older than {keep_days} days")
