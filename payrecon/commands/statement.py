"""`payrecon statement import|lines|match|unmatch|ignore` (docs/rules.md "Statements and period
tie-out"; docs/statements.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlmodel import Session

from admin.actions import statements as actions
from admin.errors import AdminError, InvalidLinesError
from ledger.db import read_session, write_session
from ledger.errors import DatabaseUnavailableError
from ledger.queries import MAX_ROW_ID
from ledger.statement_lines import (
    DEFAULT_WALLET,
    LINE_STATES,
    LineQuery,
    find_account,
    list_lines,
)
from ledger.types import utcnow
from payrecon.actor import cli_operator
from payrecon.context import EXIT_USAGE, app_context, fail
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import parse_day
from reconcile.statements.hand import LineChange
from reconcile.statements.importer import ImportSummary
from statements.facts import AccountKind, IgnoreType
from statements.formats import StatementFormat

LINE_ID = click.IntRange(1, MAX_ROW_ID)


@click.group()
def statement() -> None:
    """Import the wallet's and the bank's statements and work their lines."""


def _summary_text(summary: ImportSummary, *, dry_run: bool) -> str:
    data = summary.to_json()
    head = "would store" if dry_run else "stored"
    lines = [
        f"{summary.account}: read {data['read']}, {head} {data['new']} new, "
        f"{data['already_known']} already known, {summary.invalid_total} invalid; "
        f"matched {data['matched']}, suggested {data['suggested']}, unmatched {data['unmatched']}"
    ]
    lines += [f"  skipped line {item['line']}: {item['reason']}" for item in summary.invalid]
    lines += [
        f"  balance gap after line {b['after_line']}: the balance moves {b['difference']} kobo "
        "beyond the lines (a line missing from the export)"
        for b in summary.balance_breaks
    ]
    lines += [
        f"  reversal: line {r['line']} credits back transfer {r['transfer']}"
        for r in summary.reversals
    ]
    lines += [
        f"  the import adds lines to the locked period {p['since']} to {p['until']}"
        for p in summary.locked_periods
    ]
    return "\n".join(lines)


@statement.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--account", default=DEFAULT_WALLET, show_default=True, help="Statement account.")
@click.option(
    "--kind",
    type=click.Choice([k.value for k in AccountKind]),
    help="The account's kind when it is new (default wallet).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice([f.value for f in StatementFormat]),
    default="auto",
    show_default=True,
    help="The file's format (auto: from its first bytes).",
)
@click.option("--mapping", help="CSV/XLSX column mapping: a built-in name or a FILE.toml.")
@click.option("--skip-invalid", is_flag=True, help="Store the valid lines, list the others.")
@click.option("--dry-run", is_flag=True, help="Report what would be stored; store nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def import_command(
    ctx: click.Context,
    file: Path,
    account: str,
    kind: str | None,
    fmt: str,
    mapping: str | None,
    skip_invalid: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Parse, validate, store new lines and match them; a file with an invalid line stores
    nothing (exit 2) unless --skip-invalid."""
    app = app_context(ctx)
    settings = app.settings()
    engine = app.engine()
    try:
        with write_session(engine) as session:
            summary = actions.import_statement(
                session,
                cli_operator(),
                file,
                account=account,
                kind=kind,
                format=fmt,
                mapping=mapping,
                skip_invalid=skip_invalid,
                dry_run=dry_run,
                window=settings.statement_date_window,
                max_bytes=settings.statement_max_bytes,
                now=utcnow(),
            )
    except InvalidLinesError as exc:
        if as_json:
            click.echo(json.dumps({"invalid": exc.invalid, "invalid_total": exc.total}, indent=2))
        else:
            for item in exc.invalid:
                click.echo(f"line {item['line']}: {item['reason']}", err=True)
        fail(str(exc), EXIT_USAGE)
    except AdminError as exc:
        fail(f"{file}: {exc}", EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}", EXIT_USAGE)
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")
    if as_json:
        data = summary.to_json()
        data["dry_run"] = dry_run
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        click.echo(_summary_text(summary, dry_run=dry_run))


@statement.command("lines")
@click.option("--account", help="Only this account's lines.")
@click.option("--state", type=click.Choice(LINE_STATES), help="Only lines in this state.")
@click.option("--since", metavar="YYYY-MM-DD", help="First day (inclusive).")
@click.option("--until", metavar="YYYY-MM-DD", help="Last day (inclusive).")
@click.option("--limit", type=click.IntRange(1, 500), default=100, show_default=True)
@click.option("--cursor", help="Where the previous page ended (its next_cursor).")
@click.option("--json", "as_json", is_flag=True, help='{"items", "next_cursor"} as JSON.')
@click.pass_context
def lines_command(
    ctx: click.Context,
    account: str | None,
    state: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    cursor: str | None,
    as_json: bool,
) -> None:
    """The lines with their match, oldest first."""
    try:
        first = parse_day(since, option="--since") if since else None
        last = parse_day(until, option="--until") if until else None
    except PeriodError as exc:
        fail(str(exc), EXIT_USAGE)
    if first is not None and last is not None and last < first:
        fail("--until is before --since", EXIT_USAGE)
    engine = app_context(ctx).engine(read_only=True)
    try:
        with read_session(engine) as session:
            account_id = None
            if account is not None:
                found = find_account(session, account)
                if found is None:
                    fail(f"no statement account {account!r}", EXIT_USAGE)
                account_id = found.id
            query = LineQuery(account_id, state, first, last, limit, cursor)
            try:
                page = list_lines(session, query)
            except ValueError:
                fail("--cursor: not a cursor this list gave out", EXIT_USAGE)
    except (OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc.orig or exc}")
    if as_json:
        data = {"items": page.items, "next_cursor": page.next_cursor}
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for item in page.items:
        click.echo("\t".join(map(str, _line_row(item))))
    if page.next_cursor:
        click.echo(f"more: --cursor {page.next_cursor}", err=True)


def _line_row(item: dict[str, Any]) -> tuple[Any, ...]:
    match = (
        item["transfer"]
        or item["collection"]
        or (f"line {item['line']}" if item["line"] else item["ignored_as"] or "")
    )
    return (
        item["id"],
        item["account"],
        item["date"],
        item["direction"],
        item["amount"],
        item["state"],
        match,
        item["reference"],
        item["narration"].replace("\t", " "),
    )


def _change(ctx: click.Context, line_id: int, change: Callable[[Session], LineChange]) -> None:
    engine = app_context(ctx).engine()
    try:
        with write_session(engine) as session:
            result = change(session)
    except AdminError as exc:
        fail(str(exc), EXIT_USAGE)
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")
    after = result.after
    target = after["transfer"] or after["collection"] or after["line"] or after["ignored_as"]
    tail = f" ({after['role']})" if after["role"] else ""
    click.echo(f"line {line_id}: {after['state']}" + (f" {target}{tail}" if target else ""))


@statement.command("match")
@click.argument("line_id", metavar="LINE_ID", type=LINE_ID)
@click.option("--transfer", help="The transfer's reference (yours or the provider's).")
@click.option("--collection", help="The collection's reference (yours or the provider's).")
@click.option("--line", "other", type=LINE_ID, help="A line of the other account (a pair).")
@click.pass_context
def match_command(
    ctx: click.Context,
    line_id: int,
    transfer: str | None,
    collection: str | None,
    other: int | None,
) -> None:
    """Match a line by hand, or confirm its suggestion."""
    if sum(x is not None for x in (transfer, collection, other)) != 1:
        fail("give exactly one of --transfer, --collection or --line", EXIT_USAGE)
    _change(
        ctx,
        line_id,
        lambda session: actions.match(
            session,
            cli_operator(),
            line_id,
            transfer=transfer,
            collection=collection,
            line=other,
            now=utcnow(),
        ),
    )


@statement.command("unmatch")
@click.argument("line_id", metavar="LINE_ID", type=LINE_ID)
@click.pass_context
def unmatch_command(ctx: click.Context, line_id: int) -> None:
    """Undo a match (or an ignore): the line is unmatched and left so by the matcher."""
    _change(
        ctx,
        line_id,
        lambda session: actions.unmatch(session, cli_operator(), line_id, now=utcnow()),
    )


@statement.command("ignore")
@click.argument("line_id", metavar="LINE_ID", type=LINE_ID)
@click.option(
    "--as",
    "ignored_as",
    required=True,
    type=click.Choice([t.value for t in IgnoreType]),
    help="What the line is.",
)
@click.option("--note", required=True, help="Why (kept with the line and audited).")
@click.pass_context
def ignore_command(ctx: click.Context, line_id: int, ignored_as: str, note: str) -> None:
    """Explain a line that belongs to no transfer or collection."""
    _change(
        ctx,
        line_id,
        lambda session: actions.ignore(
            session, cli_operator(), line_id, ignored_as=ignored_as, note=note, now=utcnow()
        ),
    )
