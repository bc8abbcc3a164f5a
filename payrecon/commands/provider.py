"""`payrecon provider …`: thin commands over the provider client (tables, or `--json`)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

import click
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from payrecon.clients import make_client
from payrecon.context import EXIT_RUNTIME, EXIT_USAGE, app_context, fail
from payrecon.errors import ConfigError
from payrecon.params import KOBO
from provider.client import ProviderClient
from provider.errors import (
    AuthenticationError,
    EnquiryFailedError,
    ForeignAnswerError,
    ProviderError,
    ProviderRequestError,
    ProviderValidationError,
    UnexpectedResponseError,
)
from provider.models import Customer, Page, VirtualAccount
from reconcile.reports.naira import naira

MONEY_FIELDS = frozenset({"amount", "fee", "expected_amount"})
IDENTIFIERS = frozenset({"uid", "code", "account_number", "reference"})

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


@contextlib.contextmanager
def _provider(ctx: click.Context) -> Iterator[ProviderClient]:
    """A client from settings; every failure becomes one line and the right exit code."""
    settings = app_context(ctx).settings()
    try:
        client = make_client(settings)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    except ProviderRequestError as exc:
        fail(f"provider settings: {exc}", EXIT_USAGE)
    try:
        with client:
            yield client
    except ProviderRequestError as exc:
        fail(str(exc), EXIT_USAGE)
    except AuthenticationError:
        fail("the provider refused the key in PAYRECON_PROVIDER_SECRET_KEY (401 Unauthenticated)")
    except ProviderValidationError as exc:
        fail(f"provider: {exc}: {json.dumps(exc.errors, sort_keys=True)}")
    except ForeignAnswerError as exc:
        fail(f"PAYRECON_PROVIDER_BASE_URL does not point at the provider: {exc}")
    except UnexpectedResponseError as exc:
        fail(f"provider: {exc} (body starts: {exc.body[:200]!r})")
    except ProviderError as exc:
        fail(f"provider: {exc}", EXIT_RUNTIME)


def _json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=False, ensure_ascii=False))


def _plain(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def _cell(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name in MONEY_FIELDS and type(value) is int:
        return f"{naira(value)} ({value} kobo)"
    if isinstance(value, dict):
        shown = {k: v for k, v in value.items() if v is not None}
        return json.dumps(shown, ensure_ascii=False)
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _record(model: BaseModel, title: str) -> None:
    """One record as a two-column table, unknown fields included."""
    table = Table(title=title, show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for name, value in _plain(model).items():
        table.add_row(name, _cell(name, value))
    Console().print(table)


def _rows(models: Sequence[BaseModel], columns: Sequence[str], title: str) -> None:
    table = Table(title=title)
    for column in columns:
        # Identifiers are copied from here, so they never wrap.
        table.add_column(column, no_wrap=column in IDENTIFIERS, overflow="fold")
    for model in models:
        data = _plain(model)
        table.add_row(*(_cell(column, data.get(column)) for column in columns))
    Console().print(table)


def _show(model: BaseModel, title: str, as_json: bool) -> None:
    if as_json:
        _json(_plain(model))
    else:
        _record(model, title)


@click.group()
def provider() -> None:
    """Call the provider's API directly (PAYRECON_PROVIDER_BASE_URL, _SECRET_KEY)."""


@provider.command("banks")
@json_option
@click.pass_context
def banks(ctx: click.Context, as_json: bool) -> None:
    """List the banks and the codes transfers and enquiries accept."""
    with _provider(ctx) as client:
        result = client.banks()
    if as_json:
        _json([_plain(bank) for bank in result])
    else:
        _rows(result, ("code", "name"), f"{len(result)} banks")


@provider.command("enquiry")
@click.option("--account-number", required=True, help="10-digit account number.")
@click.option("--bank-code", required=True, help="Bank code from `payrecon provider banks`.")
@json_option
@click.pass_context
def enquiry(ctx: click.Context, account_number: str, bank_code: str, as_json: bool) -> None:
    """Look up the name on a bank account (account name enquiry)."""
    with _provider(ctx) as client:
        try:
            result = client.account_enquiry(account_number, bank_code)
        except EnquiryFailedError:
            # The spec's enquiry refusal is one text for every cause; the bank list tells
            # an unknown bank code (a usage error) from an account the bank does not hold.
            if not _bank_listed(client, bank_code):
                fail(
                    f"bank code {bank_code} is not one the provider knows; "
                    "see `payrecon provider banks` for the codes",
                    EXIT_USAGE,
                )
            fail(
                f"account name enquiry failed: bank {bank_code} holds no account "
                f"{account_number} (or the details are wrong)"
            )
    _show(result, "Account enquiry", as_json)


def _bank_listed(client: ProviderClient, bank_code: str) -> bool:
    """Whether the provider lists `bank_code`; True when the list cannot be had (no claim)."""
    try:
        return any(bank.code == bank_code for bank in client.banks())
    except ProviderError:
        return True


@provider.command("transaction")
@click.argument("reference")
@json_option
@click.pass_context
def transaction(ctx: click.Context, reference: str, as_json: bool) -> None:
    """Show one transaction as the provider has it now."""
    with _provider(ctx) as client:
        result = client.get_transaction(reference)
    _show(result, f"Transaction {reference}", as_json)


class _LookupGroup(click.Group):
    """A group whose first argument, when it is not a sub-command, is looked up with `get`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["get", *args]
        return super().parse_args(ctx, args)


@provider.group("collection", cls=_LookupGroup)
def collection() -> None:
    """Show a collection (`collection REFERENCE`) or make one (`collection create`)."""


@collection.command("get")
@click.argument("reference")
@json_option
@click.pass_context
def collection_get(ctx: click.Context, reference: str, as_json: bool) -> None:
    """Show the transaction of a collection by its reference."""
    with _provider(ctx) as client:
        result = client.get_collection(reference)
    _show(result, f"Collection {reference}", as_json)


@collection.command("create")
@click.option("--reference", required=True, help="Your reference for the collection.")
@click.option("--amount", required=True, type=KOBO, help="Amount in kobo.")
@click.option("--customer-name", default=None)
@click.option("--customer-email", default=None)
@click.option("--customer-phone", default=None)
@json_option
@click.pass_context
def collection_create(
    ctx: click.Context,
    reference: str,
    amount: int,
    customer_name: str | None,
    customer_email: str | None,
    customer_phone: str | None,
    as_json: bool,
) -> None:
    """Ask for an account a customer can pay AMOUNT kobo into (NGN)."""
    with _provider(ctx) as client:
        result = client.create_collection(
            reference=reference,
            amount=amount,
            customer_name=customer_name,
            customer_email=customer_email,
            customer_phone=customer_phone,
        )
    _show(result, f"Collection {reference}", as_json)


@provider.group("va")
def va() -> None:
    """Virtual accounts: list, get, create, deactivate."""


VA_COLUMNS = ("uid", "type", "status", "account_number", "account_name")


@va.command("list")
@click.option("--type", "type_", type=click.Choice(["static", "dynamic"]), default=None)
@click.option("--status", type=click.Choice(["active", "inactive"]), default=None)
@click.option("--page", type=int, default=1, show_default=True)
@click.option("--per-page", type=int, default=20, show_default=True)
@json_option
@click.pass_context
def va_list(
    ctx: click.Context,
    type_: str | None,
    status: str | None,
    page: int,
    per_page: int,
    as_json: bool,
) -> None:
    """List one page of virtual accounts."""
    with _provider(ctx) as client:
        result: Page[VirtualAccount] = client.list_virtual_accounts(
            type=type_, status=status, page=page, per_page=per_page
        )
    if as_json:
        meta = {"page": result.page, "per_page": result.per_page, "total": result.total}
        _json({"items": [_plain(item) for item in result.items], "meta": meta})
    else:
        title = f"Virtual accounts: page {result.page}, {len(result.items)} of {result.total}"
        _rows(result.items, VA_COLUMNS, title)


@va.command("get")
@click.argument("uid")
@json_option
@click.pass_context
def va_get(ctx: click.Context, uid: str, as_json: bool) -> None:
    """Show one virtual account."""
    with _provider(ctx) as client:
        result = client.get_virtual_account(uid)
    _show(result, f"Virtual account {uid}", as_json)


@va.command("create")
@click.option("--type", "type_", type=click.Choice(["static", "dynamic"]), required=True)
@click.option("--first-name", default=None)
@click.option("--last-name", default=None)
@click.option("--email", default=None)
@click.option("--phone", default=None)
@click.option("--bvn", default=None)
@click.option("--customer-reference", default=None, help="Your reference for the customer.")
@click.option("--expected-amount", type=KOBO, default=None, help="Kobo (dynamic accounts).")
@json_option
@click.pass_context
def va_create(
    ctx: click.Context,
    type_: str,
    first_name: str | None,
    last_name: str | None,
    email: str | None,
    phone: str | None,
    bvn: str | None,
    customer_reference: str | None,
    expected_amount: int | None,
    as_json: bool,
) -> None:
    """Issue a virtual account for a customer."""
    customer = Customer(
        reference=customer_reference,
        first_name=first_name,
        last_name=last_name,
        email=email,
        phone=phone,
        bvn=bvn,
    )
    with _provider(ctx) as client:
        result = client.create_virtual_account(
            type=type_, customer=customer, expected_amount=expected_amount
        )
    _show(result, "Virtual account created", as_json)


@va.command("deactivate")
@click.argument("uid")
@json_option
@click.pass_context
def va_deactivate(ctx: click.Context, uid: str, as_json: bool) -> None:
    """Make a virtual account inactive."""
    with _provider(ctx) as client:
        result = client.deactivate_virtual_account(uid)
    _show(result, f"Virtual account {uid}", as_json)
