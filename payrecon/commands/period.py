"""`payrecon period close`: the period tie-out of one statement account, and the lock
(docs/rules.md "Period tie-out"; docs/statements.md "Closing a period")."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from sqlalchemy.exc import DBAPIError, OperationalError

from admin.actions import statements as actions
from admin.errors import AdminError
from ledger.db import read_session, write_session
from ledger.errors import DatabaseUnavailableError
from ledger.types import utcnow
from payrecon.actor import cli_operator
from payrecon.context import EXIT_USAGE, app_context, fail
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import parse_day
from reconcile.statements.period import Closed
from reconcile.statements.render import FORMATS, write_tie_out


@click.group()
def period() -> None:
    """Tie a period out against the statement, and close it."""


@period.command("close")
@click.option("--account", required=True, help="The statement account.")
@click.option("--since", required=True, metavar="YYYY-MM-DD", help="First day (inclusive).")
@click.option("--until", required=True, metavar="YYYY-MM-DD", help="Last day (inclusive).")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
    help="Output format.",
)  # fmt: skip
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE instead of stdout (required for xlsx).",
)
@click.option("--lock", is_flag=True, help="Record the period as closed, with its tie-out.")
@click.pass_context
def close(
    ctx: click.Context,
    account: str,
    since: str,
    until: str,
    fmt: str,
    output: Path | None,
    lock: bool,
) -> None:
    """The tie-out: statement movement against ledger movement, and what explains the
    residual; exit 0 whether or not it ties out."""
    try:
        first = parse_day(since, option="--since")
        last = parse_day(until, option="--until")
    except PeriodError as exc:
        fail(str(exc), EXIT_USAGE)
    if last < first:
        fail("--until is before --since", EXIT_USAGE)
    if fmt == "xlsx" and output is None:
        fail("--format xlsx needs --output FILE", EXIT_USAGE)
    app = app_context(ctx)
    engine = app.engine() if lock else app.engine(read_only=True)
    try:
        opened = write_session(engine) if lock else read_session(engine)
        with opened as session:
            closed: Closed = actions.close_period(
                session, cli_operator(), account, first, last, lock=lock, now=utcnow()
            )
    except AdminError as exc:
        fail(str(exc), EXIT_USAGE)
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")
    try:
        write_tie_out(closed.tie_out, fmt, None if output else sys.stdout, output)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    if output is not None:
        click.echo(f"wrote {fmt} tie-out to {output}", err=True)
    if closed.lock_id is not None:
        click.echo(
            f"period {first} to {last} of {account} locked (lock {closed.lock_id})", err=True
        )
