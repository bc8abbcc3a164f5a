"""`payrecon replay`: rebuild transfer state from the stored deliveries."""

from __future__ import annotations

import json

import click

from ledger.audit import AuditAction
from ledger.db import write_session
from ledger.errors import LedgerError
from ledger.types import utcnow
from payrecon.actor import audit_cli
from payrecon.context import app_context, fail


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
    from reconcile.reports.errors import PeriodError
    from reconcile.reports.period import lagos_midnight_utc, parse_day

    start = None
    if since is not None:
        # The report's rule for days: strptime took other scripts' digits, and 0001-01-01
        # (its Lagos midnight is in year 0 UTC) failed later as "database unavailable".
        try:
            start = lagos_midnight_utc(parse_day(since, option="--since"))
        except PeriodError as exc:
            fail(str(exc), 2)
    app = app_context(ctx)
    try:
        with write_session(app.engine()) as session:
            summary = run_replay(session, since=start, now=utcnow())
            detail = f"{summary.deliveries} deliveries" + (f" since {since}" if since else "")
            audit_cli(session, AuditAction.WEBHOOK_REPLAY, None, detail, now=utcnow())
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    if as_json:
        click.echo(json.dumps(summary.__dict__))
    else:
        click.echo(
            f"replayed {summary.deliveries} deliveries over {summary.transfers} transfers: "
            f"{summary.reapplied} outcomes re-applied, {summary.recreated} events recreated"
        )
