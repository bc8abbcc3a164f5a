"""`payrecon transfer send`: name enquiry, then initiate, recorded in the ledger first."""

from __future__ import annotations

import json

import click

from ledger.errors import LedgerError
from ledger.types import utcnow
from payrecon.clients import make_client
from payrecon.context import EXIT_RUNTIME, EXIT_USAGE, app_context, fail
from payrecon.errors import ConfigError
from reconcile.errors import PayoutError, PayoutErrorKind
from reconcile.payouts import PayoutRequest, send_payout
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
@click.option("--amount", required=True, type=int, help="Amount in kobo.")
@click.option("--bank-code", required=True, help="Recipient bank code (payrecon provider banks).")
@click.option("--account-number", required=True, help="Recipient account, exactly 10 digits.")
@click.option("--reference", required=True, help="Your unique reference for this payout.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def send(
    ctx: click.Context,
    amount: int,
    bank_code: str,
    account_number: str,
    reference: str,
    as_json: bool,
) -> None:
    """Pay AMOUNT kobo to an account: enquiry, ledger intent, initiation, recorded answer."""
    app = app_context(ctx)
    settings = app.settings()
    try:
        client = make_client(settings)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    request = PayoutRequest(amount, bank_code, account_number, reference)
    try:
        with client:
            result = send_payout(app.engine(), client, request, now=utcnow())
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
