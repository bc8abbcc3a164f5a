"""`payrecon checks list|prune`: the provider checks the reconciler kept."""

from __future__ import annotations

import json

import click
from sqlalchemy.exc import DBAPIError, OperationalError

from admin.actions.checks import PRUNE_BATCH, prune_batch
from ledger.checks import check_dict, list_checks
from ledger.db import read_session, write_session
from ledger.errors import DatabaseUnavailableError
from ledger.queries import find_transfer
from ledger.types import utcnow
from payrecon.actor import cli_operator
from payrecon.context import app_context, fail


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
    actor = cli_operator()
    total = 0
    try:
        while True:
            with write_session(engine) as session:
                deleted = prune_batch(session, actor, keep_days=keep_days, now=now)
            total += deleted
            if deleted < PRUNE_BATCH:
                break
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")
    click.echo(f"pruned {total} provider checks older than {keep_days} days")
