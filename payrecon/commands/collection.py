"""`payrecon collection create|expect|import|show` (docs/rules.md: Collections)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from sqlmodel import Session

from admin.actions.payments import COLLECTIONS, collect
from admin.expected import parse_expected_collection, parse_expected_collection_row
from ledger.collections import (
    ExpectedCollection,
    collection_record,
    expected_collection_row,
    find_collection,
)
from ledger.db import read_session
from ledger.errors import LedgerError
from ledger.models import Collection
from ledger.registration import stored_time
from ledger.types import takes_text, utcnow
from payments.collections import CollectionRequest
from payments.errors import CollectionError
from payrecon.actor import cli_operator
from payrecon.clients import make_client
from payrecon.commands.payout import EXIT_FOR_KIND
from payrecon.context import EXIT_USAGE, app_context, fail
from payrecon.csvimport import Batched, CsvSource, check_rows, register_all, register_one
from payrecon.errors import ConfigError
from payrecon.params import KOBO, PAYOUT_KOBO
from reconcile.reports.naira import naira, naira_text

IMPORT_COLUMNS = ("reference", "amount", "expires_at")


def _identical(expected: ExpectedCollection, held: dict[str, Any], session: Session) -> bool:
    # What ledger.collections.register_expected_collection would accept without a change.
    return (
        held["reference"] == expected.reference
        and held["amount"] == expected.amount
        and (
            expected.expires_at is None
            or held["expires_at"] == stored_time(session, expected.expires_at)
        )
    )


@click.group()
def collection() -> None:
    """Collect money: accounts customers pay into, checked like payouts."""


@collection.command("create")
@click.option("--amount", required=True, type=PAYOUT_KOBO, help="Amount to collect, in kobo.")
@click.option("--reference", required=True, help="Your unique reference for this collection.")
@click.option("--currency", default="NGN", show_default=True, help="NGN only.")
@click.option("--customer-name", default=None, help="Who pays (shown on the account name).")
@click.option("--customer-email", default=None, help="The customer's e-mail address.")
@click.option("--customer-phone", default=None, help="The customer's phone number.")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@click.pass_context
def create(
    ctx: click.Context,
    amount: int,
    reference: str,
    currency: str,
    customer_name: str | None,
    customer_email: str | None,
    customer_phone: str | None,
    as_json: bool,
) -> None:
    """Ask the provider for an account the customer pays AMOUNT kobo into (intent first)."""
    app = app_context(ctx)
    settings = app.settings()
    request = CollectionRequest(
        reference=reference,
        amount=amount,
        currency=currency,
        customer_name=customer_name,
        customer_email=customer_email,
        customer_phone=customer_phone,
    )
    try:
        client = make_client(settings)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        with client:
            result = collect(app.engine(), client, cli_operator(), request, now=utcnow())
    except CollectionError as exc:
        field = getattr(exc, "field", None)
        prefix = f"--{field.replace('_', '-')}: " if field else ""
        fail(prefix + exc.message, EXIT_FOR_KIND[exc.kind])
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    for warning in result.warnings:
        click.echo(f"payrecon: warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps({**result.record, "created": result.created}))
        return
    click.echo(describe(result.record, created=result.created))


def describe(record: dict[str, Any], *, created: bool | None = None) -> str:
    """What a person needs to tell the customer: where to pay, how much, until when
    (`created` None: no verb after the reference, as `show` prints it)."""
    verb = "" if created is None else ": created" if created else ": already recorded"
    return (
        f"{record['reference']}{verb}\n"
        f"pay:        {naira(record['amount'])} ({record['amount']:,} kobo)\n"
        f"bank:       {record['bank_name'] or '-'}\n"
        f"account:    {record['account_number'] or '-'}\n"
        f"name:       {record['account_name'] or '-'}\n"
        f"expires at: {record['expires_at'] or '-'}\n"
        f"fee quoted: {naira(record['fee'])}\n"
        f"status:     {record['status']}"
    )


@collection.command("expect")
@click.option("--reference", required=True, help="The merchant's reference.")
@click.option("--amount", required=True, type=KOBO, help="Expected amount in kobo.")
@click.option("--expires-at", default=None, help="When its account expires (ISO-8601; UTC).")
@click.pass_context
def expect(ctx: click.Context, reference: str, amount: int, expires_at: str | None) -> None:
    """Register one collection created elsewhere so the reconciler checks it."""
    register_one(
        app_context(ctx).engine(),
        {"reference": reference, "amount": amount, "expires_at": expires_at},
        parse=parse_expected_collection,
        registry=COLLECTIONS,
    )


@collection.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def import_file(ctx: click.Context, file: Path, as_json: bool) -> None:
    """Register many collections from a CSV (columns: reference, amount, expires_at).

    The whole file is checked first; nothing is written unless every row is valid.
    """
    app = app_context(ctx)
    source = CsvSource(file, ("reference", "amount"), IMPORT_COLUMNS, parse_expected_collection_row)
    check_rows(source)
    register_all(
        app.engine(),
        source,
        registry=COLLECTIONS,
        batched=Batched(
            Collection.__table__,  # type: ignore[attr-defined]
            lambda expected: (expected.reference,),
            expected_collection_row,
            ("amount", "expires_at"),
            _identical,
        ),
        as_json=as_json,
    )


@collection.command("show")
@click.argument("reference")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@click.pass_context
def show(ctx: click.Context, reference: str, as_json: bool) -> None:
    """The collection with this (merchant's or provider's) reference, and its findings."""
    app = app_context(ctx)
    if not takes_text(reference) or len(reference) > 200:
        fail("no collection with that reference", EXIT_USAGE)
    try:
        with read_session(app.engine(read_only=True)) as session:
            found = find_collection(session, reference)
            record = None if found is None else collection_record(session, found)
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    if record is None:
        fail(f"no collection with reference {reference!r}", EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(record))
        return
    lines = [
        describe(record),
        f"confirmed:  {'yes' if record['confirmed'] else 'no'}",
        f"paid:       {naira(record['amount_paid'])} at {record['paid_at'] or '-'}",
        f"fee:        {naira(record['provider_fee'])}",
    ]
    if record["failure_reason"]:
        # The provider's words, with any kobo figure in naira ("expected 5000 kobo" → ₦50.00).
        lines.append(f"reason:     {naira_text(record['failure_reason'])}")
    for finding in record["findings"]:
        state = "resolved" if finding["resolved_at"] else "open"
        detail = naira_text(finding["detail"])
        lines.append(f"finding #{finding['id']} {finding['kind']} ({state}): {detail}")
    click.echo("\n".join(lines))
