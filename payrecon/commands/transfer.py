"""`payrecon transfer send|expect|import`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from sqlmodel import Session

from admin.actions.payments import TRANSFERS
from admin.expected import parse_expected, parse_expected_row
from ledger.models import Transfer
from ledger.queries import ExpectedTransfer, expected_transfer_row
from ledger.types import TransferOrigin
from payrecon.commands.payout import send
from payrecon.context import app_context
from payrecon.csvimport import Batched, CsvSource, check_rows, register_all, register_one
from payrecon.params import KOBO

IMPORT_COLUMNS = ("reference", "amount", "fee", "provider_reference")


def _identical(expected: ExpectedTransfer, held: dict[str, Any], session: Session) -> bool:
    # What ledger.queries.register_expected would accept without a change: not an orphan to
    # complete, and every figure given equal to the one held.
    return (
        held["origin"] != TransferOrigin.WEBHOOK.value
        and held["reference"] == expected.reference
        and held["amount"] == expected.amount
        and expected.fee in (None, held["fee"])
        and expected.provider_reference in (None, held["provider_reference"])
    )


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
    register_one(
        app_context(ctx).engine(),
        {
            "reference": reference,
            "amount": amount,
            "fee": fee,
            "provider_reference": provider_reference,
        },
        parse=parse_expected,
        registry=TRANSFERS,
    )


@transfer.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def import_file(ctx: click.Context, file: Path, as_json: bool) -> None:
    """Register many transfers from a CSV (columns: reference, amount, fee, provider_reference).

    The whole file is checked first; nothing is written unless every row is valid.
    """
    app = app_context(ctx)
    source = CsvSource(file, ("reference", "amount"), IMPORT_COLUMNS, parse_expected_row)
    check_rows(source)
    register_all(
        app.engine(),
        source,
        registry=TRANSFERS,
        batched=Batched(
            Transfer.__table__,  # type: ignore[attr-defined]
            lambda expected: (expected.reference, expected.provider_reference),
            expected_transfer_row,
            ("origin", "amount", "fee"),
            _identical,
        ),
        as_json=as_json,
    )
