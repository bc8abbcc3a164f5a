"""`payrecon findings list|ack`: look at findings and acknowledge one with a note."""

from __future__ import annotations

import json
import sys

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from sqlalchemy.exc import DBAPIError, OperationalError

from ledger.db import read_session, write_session
from ledger.errors import DatabaseUnavailableError, NoteError
from ledger.findings import acknowledge_finding, check_note
from ledger.types import FindingKind, utcnow
from payrecon.context import EXIT_USAGE, app_context, fail
from reconcile.reports.findings import list_findings

PIPE_WIDTH = 160


@click.group()
def findings() -> None:
    """Findings raised by the receiver and the reconciler."""


@findings.command("list")
@click.option("--open", "open_only", is_flag=True, help="Only unresolved findings.")
@click.option("--kind", type=click.Choice([k.value for k in FindingKind]), help="Only this kind.")
@click.option("--json", "as_json", is_flag=True, help="One JSON array instead of a table.")
@click.pass_context
def findings_list(ctx: click.Context, open_only: bool, kind: str | None, as_json: bool) -> None:
    """List findings, oldest first (acknowledged ones are marked, never hidden)."""
    engine = app_context(ctx).engine(read_only=True)
    try:
        with read_session(engine) as session:
            items = list_findings(session, open_only=open_only, kind=kind)
    except (OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc.orig or exc}")
    if as_json:
        click.echo(json.dumps(items, indent=2, ensure_ascii=False))
        return
    if not items:
        click.echo("no findings")
        return
    table = Table(box=box.SIMPLE_HEAVY)
    for name in ("Id", "Kind", "Reference", "Detail", "Opened (UTC)", "State"):
        table.add_column(name, justify="right" if name == "Id" else "left")
    for item in items:
        if item["resolved_at"]:
            state = f"resolved {item['resolved_at']}"
        elif item["acknowledged_at"]:
            state = f"acknowledged: {item['ack_note']}"
        else:
            state = "open"
        table.add_row(
            str(item["id"]),
            item["kind"],
            escape(item["reference"]),
            escape(item["detail"]),
            item["opened_at"],
            escape(state),
        )
    # Piped into a file or another program, keep whole lines rather than a wrapped 80 columns.
    Console(width=None if sys.stdout.isatty() else PIPE_WIDTH).print(table)


@findings.command("ack")
@click.argument("finding_id", metavar="ID", type=int)
@click.option("--note", required=True, help="Why it is acknowledged (shown in reports).")
@click.pass_context
def findings_ack(ctx: click.Context, finding_id: int, note: str) -> None:
    """Acknowledge finding ID: it stays in reports, marked, and stops alerting."""
    try:
        note = check_note(note)
    except NoteError as exc:
        fail(f"--note: {exc}", EXIT_USAGE)
    engine = app_context(ctx).engine()
    try:
        with write_session(engine) as session:
            finding = acknowledge_finding(session, finding_id=finding_id, note=note, now=utcnow())
            kind = None if finding is None else finding.kind
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")
    if kind is None:
        fail(f"no finding with id {finding_id}")
    click.echo(f"acknowledged finding {finding_id} ({kind})")
