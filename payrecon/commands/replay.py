"""`payrecon replay`: rebuild transfer state from the stored deliveries."""

from __future__ import annotations

import datetime as dt
import json

import click

from ledger.db import write_session
from ledger.errors import LedgerError
from ledger.types import utcnow
from payrecon.context import app_context, fail

LAGOS = dt.timezone(dt.timedelta(hours=1))  # Africa/Lagos has no daylight saving time


@click.command()
@click.option(
    "--since",
    default=None,
    help="Only deliveries received on or after this Lagos day (YYYY-MM-DD).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def replay(ctx: click.Context, since: str | None, as_json: bool) -> None:
    """Re-apply archived webhook deliveries in arrival order; the result equals live ingest."""
    from receiver.replay import replay as run_replay

    start = None
    if since is not None:
        try:
            start = dt.datetime.strptime(since, "%Y-%m-%d").replace(tzinfo=LAGOS)
        except ValueError:
            fail(f"--since: {since!r} is not a YYYY-MM-DD date", 2)
    app = app_context(ctx)
    try:
        with write_session(app.engine()) as session:
            summary = run_replay(session, since=start, now=utcnow())
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    if as_json:
        click.echo(json.dumps(summary.__dict__))
    else:
        click.echo(
            f"replayed {summary.deliveries} deliveries over {summary.transfers} transfers: "
            f"{summary.reapplied} outcomes re-applied, {summary.recreated} events recreated"
        )
