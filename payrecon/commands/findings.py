"""`payrecon findings list|ack|assign|note`: look at findings and work them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlmodel import Session

from admin.actions import findings as actions
from admin.errors import InvalidError, MissingFindingsError
from ledger.db import read_session, write_session
from ledger.errors import DatabaseUnavailableError
from ledger.queries import MAX_ROW_ID
from ledger.types import FindingKind, utcnow
from payrecon.actor import cli_operator
from payrecon.context import EXIT_USAGE, app_context, fail
from reconcile.reports.findings import list_findings
from reconcile.reports.naira import naira_text

PLAIN_HEADER = ("id", "kind", "reference", "detail", "opened_at", "state")
UNBOUNDED = 1_000_000  # measure the table's real minimum width, not one capped at the screen
_FLAT = str.maketrans("\t\r\n", "   ")


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
    console = Console()
    if console.is_terminal:
        _print_for_terminal(console, items)
    else:
        # Piped into a file or another program: one tab-separated line per finding, nothing
        # cut and no box drawing, so `cut -f3` gives the references.
        click.echo("\n".join("\t".join(map(_cell, row)) for row in _rows(items, header=True)))


def _state(item: dict[str, Any]) -> str:
    if item["resolved_at"]:
        return f"resolved {item['resolved_at']}"
    if item["acknowledged_at"]:
        return f"acknowledged: {item['ack_note']}"
    return "open"


def _detail(item: dict[str, Any]) -> str:
    # Text for people: figures in naira (`--json` keeps the stored kobo detail).
    return naira_text(item["detail"])


def _rows(items: list[dict[str, Any]], *, header: bool = False) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [PLAIN_HEADER] if header else []
    rows.extend(
        (str(i["id"]), i["kind"], i["reference"], _detail(i), i["opened_at"], _state(i))
        for i in items
    )
    return rows


def _cell(text: str) -> str:
    # A tab or a line break inside a value would shift every column after it.
    return text.translate(_FLAT)


def _print_for_terminal(console: Console, items: list[dict[str, Any]]) -> None:
    # Ops copy references: they are never cut or wrapped. Detail and state wrap instead, and
    # on a terminal too narrow for that each finding gets a block of its own.
    table = Table(box=box.SIMPLE_HEAVY)
    table.add_column("Id", justify="right", no_wrap=True)
    table.add_column("Kind", no_wrap=True)
    table.add_column("Reference", no_wrap=True)
    table.add_column("Detail", min_width=24, overflow="fold")
    table.add_column("Opened (UTC)", min_width=10, overflow="fold")
    table.add_column("State", min_width=14, overflow="fold")
    for id_, kind, reference, detail, opened, state in _rows(items):
        # "2025-03-01 08:00": a date and a time can wrap where one ISO string cannot.
        when = opened[:16].replace("T", " ")
        table.add_row(*map(escape, (id_, kind, reference, detail, when, state)))
    unbounded = console.options.update_width(UNBOUNDED)
    if Measurement.get(console, unbounded, table).minimum <= console.width:
        console.print(table)
        return
    for number, (id_, kind, reference, detail, opened, state) in enumerate(_rows(items)):
        lines = [
            f"[bold]finding {escape(id_)}[/bold]  {escape(kind)}  {escape(state)}",
            f"  reference: {escape(reference)}",
            f"  opened:    {escape(opened)}",
            f"  detail:    {escape(detail)}",
        ]
        # soft_wrap: a long reference is wrapped by the terminal, not broken with a newline.
        console.print(("\n" if number else "") + "\n".join(lines), soft_wrap=True, highlight=False)


def _change(ctx: click.Context, change: Callable[[Session], str], *, several: bool = False) -> None:
    """Run `change` in one transaction and print its line; the usual failures exit clearly
    (`several`: the change was about several findings, and none of them changed)."""
    engine = app_context(ctx).engine()
    try:
        with write_session(engine) as session:
            line = change(session)
    except MissingFindingsError as exc:
        fail(f"{exc}; nothing changed" if several else str(exc))
    except InvalidError as exc:
        fail(str(exc), EXIT_USAGE)
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")
    click.echo(line)


@findings.command("ack")
@click.argument("finding_ids", metavar="ID...", type=click.IntRange(1, MAX_ROW_ID), nargs=-1)
@click.option("--note", required=True, help="Why they are acknowledged (shown in reports).")
@click.pass_context
def findings_ack(ctx: click.Context, finding_ids: tuple[int, ...], note: str) -> None:
    """Acknowledge findings ID...: they stay in reports, marked, and stop alerting.

    All or nothing: when one ID does not exist, none is acknowledged.
    """
    if not finding_ids:
        fail("give at least one finding ID", EXIT_USAGE)
    try:
        note = actions.checked_note(note)
    except InvalidError as exc:
        fail(f"--note: {exc.message}", EXIT_USAGE)
    ids = list(dict.fromkeys(finding_ids))

    def change(session: Session) -> str:
        done = actions.acknowledge(session, cli_operator(), ids, note, now=utcnow())
        return "\n".join(f"acknowledged finding {f.id} ({f.kind})" for f in done)

    _change(ctx, change, several=len(ids) > 1)


@findings.command("assign")
@click.argument("finding_id", metavar="ID", type=click.IntRange(1, MAX_ROW_ID))
@click.argument("name", required=False)
@click.option("--nobody", is_flag=True, help="Unassign instead.")
@click.pass_context
def findings_assign(ctx: click.Context, finding_id: int, name: str | None, nobody: bool) -> None:
    """Give finding ID to the operator NAME (or to nobody with --nobody)."""
    if (name is None) == (not nobody):
        fail("give an operator NAME or --nobody", EXIT_USAGE)

    def change(session: Session) -> str:
        actions.assign(session, cli_operator(), finding_id, name, now=utcnow())
        return f"finding {finding_id} assigned to {name or 'nobody'}"

    _change(ctx, change)


@findings.command("note")
@click.argument("finding_id", metavar="ID", type=click.IntRange(1, MAX_ROW_ID))
@click.argument("text", metavar="TEXT")
@click.pass_context
def findings_note(ctx: click.Context, finding_id: int, text: str) -> None:
    """Add a note to finding ID (kept with its author and time)."""
    try:
        text = actions.checked_note(text)
    except InvalidError as exc:
        fail(f"TEXT: {exc.message}", EXIT_USAGE)

    def change(session: Session) -> str:
        actions.note(session, cli_operator(), finding_id, text, now=utcnow())
        return f"note added to finding {finding_id}"

    _change(ctx, change)
