"""`payrecon transfer send|expect|import`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import click

from admin.errors import ExpectedInputError
from admin.expected import parse_expected, parse_expected_row, register
from ledger.audit import AuditAction
from ledger.db import write_session
from ledger.errors import ConflictError, LedgerError
from ledger.types import utcnow
from payrecon.actor import audit_cli
from payrecon.commands.payout import send
from payrecon.context import EXIT_USAGE, app_context, fail
from payrecon.params import KOBO

IMPORT_COLUMNS = ("reference", "amount", "fee", "provider_reference")


@click.group()
def transfer() -> None:
    """Pay out, or register transfers initiated elsewhere."""


transfer.add_command(send)


@transfer.command("expect")
@click.option("--reference", required=True, help="The merchant's reference.")
@click.option("--amount", required=True, type=KOBO, help="Expected amount in kobo.")
@click.option("--fee", default=None, type=KOBO, help="Quoted fee in kobo.")
@click.option("--provider-reference", default=None, help="The provider's reference, if known.")
@click.pass_context
def expect(
    ctx: click.Context, reference: str, amount: int, fee: int | None, provider_reference: str | None
) -> None:
    """Register one transfer initiated elsewhere so the reconciler checks it."""
    app = app_context(ctx)
    try:
        expected = parse_expected(
            {
                "reference": reference,
                "amount": amount,
                "fee": fee,
                "provider_reference": provider_reference,
            }
        )
    except ExpectedInputError as exc:
        fail(f"--{exc.field.replace('_', '-')}: {exc.message}", EXIT_USAGE)
    try:
        with write_session(app.engine()) as session:
            now = utcnow()
            record, created = register(session, expected, now=now)
            if created:
                subject = f"transfer:{record['reference']}"
                audit_cli(session, AuditAction.EXPECTED_REGISTER, subject, None, now=now)
    except ConflictError as exc:
        fail(str(exc))
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    verb = "registered" if created else "already registered (identical)"
    click.echo(f"{record['reference']}: {verb}")


@transfer.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def import_file(ctx: click.Context, file: Path, as_json: bool) -> None:
    """Register many transfers from a CSV (columns: reference, amount, fee, provider_reference).

    The whole file is checked first; nothing is written unless every row is valid.
    """
    app = app_context(ctx)
    try:
        with file.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = {"reference", "amount"} - set(reader.fieldnames or [])
            if missing:
                fail(f"{file}: missing column(s) {', '.join(sorted(missing))}", EXIT_USAGE)
            rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as exc:
        fail(f"{file}: not a readable CSV file ({exc})", EXIT_USAGE)
    parsed = []
    for line, row in enumerate(rows, start=2):
        try:
            parsed.append(parse_expected_row({k: row.get(k) for k in IMPORT_COLUMNS}))
        except ExpectedInputError as exc:
            fail(f"{file}:{line}: {exc.field}: {exc.message}", EXIT_USAGE)
    created = identical = 0
    try:
        with write_session(app.engine()) as session:
            now = utcnow()
            for line, expected in enumerate(parsed, start=2):
                try:
                    _, was_created = register(session, expected, now=now)
                except ConflictError as exc:
                    raise ConflictError(f"{file}:{line}: {exc}") from exc
                created += was_created
                identical += not was_created
            if created:
                detail = f"{created} registered from {file.name}"
                audit_cli(session, AuditAction.EXPECTED_REGISTER, None, detail, now=now)
    except ConflictError as exc:
        fail(f"{exc} (nothing imported)")
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    summary = {"rows": len(parsed), "registered": created, "already_registered": identical}
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo(f"{summary['rows']} rows: {created} registered, {identical} already registered")
