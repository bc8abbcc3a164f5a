"""`payrecon transfer send`: name enquiry, then initiate, recorded in the ledger first."""

from __future__ import annotations

import json
import sys

import click

from admin.actions.payments import pay_out
from ledger.errors import LedgerError
from ledger.types import utcnow
from payments.errors import PayoutError, PayoutErrorKind
from payments.payouts import Confirm, PayoutRequest, Recipient
from payrecon.actor import cli_operator
from payrecon.clients import make_client
from payrecon.context import EXIT_RUNTIME, EXIT_USAGE, app_context, fail
from payrecon.errors import ConfigError
from payrecon.params import PAYOUT_KOBO
from reconcile.fees import FeeSchedule
from reconcile.reports.naira import naira

# The caller's data is wrong → usage (2); the provider or our set-up failed → runtime (1).
EXIT_FOR_KIND = {
    PayoutErrorKind.INVALID: EXIT_USAGE,
    PayoutErrorKind.ENQUIRY_FAILED: EXIT_USAGE,
    PayoutErrorKind.DUPLICATE: EXIT_USAGE,
    PayoutErrorKind.REJECTED: EXIT_RUNTIME,
    PayoutErrorKind.UNAVAILABLE: EXIT_RUNTIME,
    PayoutErrorKind.AUTH: EXIT_RUNTIME,
    PayoutErrorKind.PENDING: EXIT_RUNTIME,
}
_WRONG_INPUT_CAUSES = {"Invalid bank code", "Account not found", "Duplicate reference"}


@click.command("send")
@click.option("--amount", required=True, type=PAYOUT_KOBO, help="Amount in kobo.")
@click.option("--bank-code", required=True, help="Recipient bank code (payrecon provider banks).")
@click.option("--account-number", required=True, help="Recipient account, exactly 10 digits.")
@click.option("--reference", required=True, help="Your unique reference for this payout.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--yes", "-y", is_flag=True, help="Do not ask for confirmation (only asked on a terminal)."
)
@click.pass_context
def send(
    ctx: click.Context,
    amount: int,
    bank_code: str,
    account_number: str,
    reference: str,
    as_json: bool,
    yes: bool,
) -> None:
    """Pay AMOUNT kobo to an account: enquiry, ledger intent, initiation, recorded answer.

    On a terminal it shows the account holder's name and the amount in naira and asks
    before paying (default no); --yes skips the question. Scripts are never asked.
    """
    app = app_context(ctx)
    settings = app.settings()
    try:
        client = make_client(settings)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    request = PayoutRequest(amount, bank_code, account_number, reference)
    # Only a person at a terminal can answer; a script or a pipe is never asked.
    ask = not yes and sys.stdin.isatty()
    confirm = _asker(settings.fee_schedule) if ask else None
    try:
        with client:
            result = pay_out(
                app.engine(), client, cli_operator(), request, now=utcnow(), confirm=confirm
            )
    except _DeclinedError:
        fail(f"{reference}: not sent (you answered no); nothing was paid or recorded")
    except PayoutError as exc:
        code = EXIT_FOR_KIND[exc.kind]
        if getattr(exc, "cause", None) in _WRONG_INPUT_CAUSES:
            code = EXIT_USAGE
        fail(exc.message, code)
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    if as_json:
        click.echo(json.dumps(result.__dict__))
        return
    verb = "sent" if result.created else "already recorded"
    click.echo(
        f"{result.reference}: {verb} — {naira(result.amount)} to {result.account_name}, "
        f"provider reference {result.provider_reference or 'pending lookup'}, "
        f"fee {naira(result.fee)}, status {result.status}"
    )


class _DeclinedError(Exception):
    """The person at the terminal answered no."""


def _describe(request: PayoutRequest, recipient: Recipient, fees: FeeSchedule | None) -> str:
    """What a person confirms: name, bank, account, amount and fee in naira."""
    fee = fees.fee_for(request.amount) if fees is not None else None
    if fee is None:
        fee_line = "fee:          quoted by the provider when it accepts"
        debit = ""
    else:
        fee_line = f"fee:          {naira(fee)} by your fee schedule (PAYRECON_FEE_SCHEDULE)"
        debit = f"\nwallet debit: {naira(request.amount + fee)}"
    return (
        f"Pay {naira(request.amount)} ({request.amount:,} kobo)\n"
        f"to:           {recipient.account_name}\n"
        f"bank:         {recipient.bank_name} ({request.bank_code})\n"
        f"account:      {request.account_number}\n"
        f"reference:    {request.reference}\n"
        f"{fee_line}{debit}"
    )


def _asker(fees: FeeSchedule | None) -> Confirm:
    def ask(request: PayoutRequest, recipient: Recipient) -> None:
        # On stderr, so `--json` output on stdout stays one JSON document.
        click.echo(_describe(request, recipient, fees), err=True)
        if not click.confirm("Send this payout?", default=False, err=True):
            raise _DeclinedError

    return ask
