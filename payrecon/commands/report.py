"""`payrecon report`: the finance report for a period of Africa/Lagos days."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from sqlalchemy.exc import DBAPIError, OperationalError

from ledger.db import read_session
from payrecon.context import EXIT_USAGE, app_context, fail
from reconcile.reports.errors import OutputError, PeriodError
from reconcile.reports.period import parse_period
from reconcile.reports.render import FORMATS, write_report


@click.command()
@click.option("--since", metavar="YYYY-MM-DD", help="First Africa/Lagos day (inclusive).")
@click.option("--until", metavar="YYYY-MM-DD", help="Last Africa/Lagos day (inclusive).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE instead of stdout (required for xlsx).",
)
@click.pass_context
def report(
    ctx: click.Context, since: str | None, until: str | None, fmt: str, output: Path | None
) -> None:
    """Finance report: totals by status, fees, wallet debit, findings, stale pending, days."""
    try:
        period = parse_period(since, until)
    except PeriodError as exc:
        fail(str(exc), EXIT_USAGE)
    if fmt == "xlsx" and output is None:
        fail("--format xlsx needs --output FILE", EXIT_USAGE)
    app = app_context(ctx)
    stale_after = app.settings().stale_after
    engine = app.engine(read_only=True)
    try:
        with read_session(engine) as session:
            write_report(
                session,
                period=period,
                fmt=fmt,
                out=None if output else sys.stdout,
                path=output,
                stale_after=stale_after,
            )
    except OutputError as exc:
        fail(str(exc), EXIT_USAGE)
    except BrokenPipeError:
        # The reader went away (`payrecon report | head`): nothing left to say, and no traceback.
        sys.stderr.close()
        sys.exit(0)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    except (OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc.orig or exc}")
    if output is not None:
        click.echo(f"wrote {fmt} report to {output}", err=True)
