"""`payrecon db upgrade`: apply the ledger's migrations."""

from __future__ import annotations

import click

from ledger.errors import DatabaseUnavailableError
from ledger.migrate import current, upgrade
from payrecon.context import app_context, fail


@click.group()
def db() -> None:
    """Database maintenance."""


@db.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Alembic revision.")
@click.pass_context
def db_upgrade(ctx: click.Context, revision: str) -> None:
    """Apply migrations (done on start for SQLite; run this first on PostgreSQL)."""
    settings = app_context(ctx).settings()
    try:
        upgrade(settings.database_url, revision)
        click.echo(f"database at revision {current(settings.database_url)}")
    except DatabaseUnavailableError as exc:
        fail(f"database unavailable: {exc}")
