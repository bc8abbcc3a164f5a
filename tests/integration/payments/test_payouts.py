"""`transfer send` / send_payout: every initiation outcome, its CLI message and exit code."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from admin.api import payout_status
from ledger.db import read_session
from ledger.queries import find_transfer
from ledger.types import utcnow
from payments.errors import PayoutErrorKind, PayoutPendingResolutionError, PayoutRejectedError
from payments.payouts import PayoutRequest, send_payout
from payrecon.cli import cli
from provider import errors as perr
from provider.client import ProviderClient
from provider.models import AccountEnquiry, Transaction, TransferInitiation
from tests.integration.reconcile.helpers import Sandbox, running_sandbox
from tests.support.apps import sandbox_settings
from tests.support.payouts import send_options


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """A sandbox whose transfers stay pending until forced."""
    with running_sandbox(complete_after=None) as box:
        yield box


def _send(database_url: str, sandbox: Sandbox, *args: str) -> Any:
    env = sandbox_settings(database_url, sandbox)
    return CliRunner().invoke(cli, ["transfer", "send", *args], env=env)


def _row(engine: Engine, reference: str) -> Any:
    with read_session(engine) as session:
        return find_transfer(session, reference)


def test_send_records_intent_then_accepted(
    database_url: str, engine: Engine, sandbox: Sandbox
) -> None:
    """A successful send prints the provider reference and leaves an accepted, due transfer."""
    account = sandbox.accounts()[0]
    result = _send(database_url, sandbox, *send_options(account, "OK-1"))
    assert result.exit_code == 0, result.output
    assert "₦2,500.00" in result.output
    row = _row(engine, "OK-1")
    assert row.initiation == "accepted"
    assert row.provider_reference.startswith("TRF_")
    assert row.fee == 1_000
    assert row.account_name == account["account_name"]
    assert row.next_check_at is not None


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        ({"wallet": 0}, "Insufficient funds"),
        ({"webhook": None}, "Webhook not configured"),
        ({"whitelist": True}, "IP whitelisting is enabled"),
    ],
    ids=["insufficient-funds", "webhook-not-configured", "whitelist-empty"],
)
def test_sandbox_refusals_fail_cleanly(
    database_url: str, engine: Engine, sandbox: Sandbox, setup: dict[str, Any], needle: str
) -> None:
    """A refusal exits 1 with the cause and leaves a failed, rejected, not-due transfer."""
    if "wallet" in setup:
        sandbox.http.post("/_sandbox/wallet", json={"balance": 0}).raise_for_status()
    if "webhook" in setup:
        sandbox.http.post("/_sandbox/webhook-url", json={"url": None}).raise_for_status()
    if "whitelist" in setup:
        sandbox.http.post("/_sandbox/whitelist", json={"enabled": True}).raise_for_status()
    result = _send(database_url, sandbox, *send_options(sandbox.accounts()[0], "NO-1"))
    assert result.exit_code == 1
    assert needle in result.output
    assert "nothing was paid" in result.output
    row = _row(engine, "NO-1")
    assert (row.status, row.initiation, row.next_check_at) == ("failed", "rejected", None)
    assert sandbox.transfers() == []


def test_enquiry_failure_writes_nothing(
    database_url: str, engine: Engine, sandbox: Sandbox
) -> None:
    """The account that fails enquiry exits 2 and leaves no transfer at all."""
    account = sandbox.accounts("enquiry_fails")[0]
    result = _send(database_url, sandbox, *send_options(account, "ENQ-1"))
    assert result.exit_code == 2
    assert "account name enquiry failed" in result.output
    assert _row(engine, "ENQ-1") is None


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--amount", "0"], "amount"),
        (["--account-number", "123"], "10 digits"),
        (["--reference", "bad ref"], "reference"),
    ],
)
def test_malformed_input_is_a_usage_error(
    database_url: str, sandbox: Sandbox, args: list[str], needle: str
) -> None:
    """Malformed options exit 2 naming what is wrong, before anything is sent."""
    base = dict(
        zip(
            send_options(sandbox.accounts()[0], "IN-1")[::2],
            send_options(sandbox.accounts()[0], "IN-1")[1::2],
            strict=True,
        )
    )
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    result = _send(database_url, sandbox, *[x for kv in base.items() for x in kv])
    assert result.exit_code == 2
    assert needle in result.output
    assert sandbox.transfers() == []


def test_same_reference_twice_is_idempotent_and_different_is_duplicate(
    database_url: str, sandbox: Sandbox
) -> None:
    """Re-sending the same payout sends nothing; reusing its reference otherwise exits 2."""
    account = sandbox.accounts()[0]
    assert _send(database_url, sandbox, *send_options(account, "DUP-1")).exit_code == 0
    again = _send(database_url, sandbox, *send_options(account, "DUP-1"))
    assert again.exit_code == 0
    assert "already recorded" in again.output
    other = _send(database_url, sandbox, *send_options(account, "DUP-1", amount=999))
    assert other.exit_code == 2
    assert "already used" in other.output
    assert len(sandbox.transfers()) == 1


def test_provider_duplicate_reference_is_resolved_by_lookup(
    engine: Engine, sandbox: Sandbox
) -> None:
    """A reference the provider already holds (our lost attempt) is looked up and recorded."""
    account = sandbox.accounts()[0]
    with ProviderClient(sandbox.base_url, sandbox.config.secret_key) as client:
        client.initiate_transfer(
            amount=250_000,
            bank_code=account["bank_code"],
            account_number=account["account_number"],
            reference="LOST-1",
        )
        result = send_payout(
            engine,
            client,
            PayoutRequest(250_000, account["bank_code"], account["account_number"], "LOST-1"),
            now=utcnow(),
        )
    assert result.initiation == "accepted"
    assert result.provider_reference == sandbox.transfers()[0]["reference"]
    assert len(sandbox.transfers()) == 1


class FakeClient:
    """A provider client whose initiation raises a chosen error."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def account_enquiry(self, account_number: str, bank_code: str) -> AccountEnquiry:
        return AccountEnquiry(
            bank_name="Bank", account_name="A N OTHER", account_number=account_number
        )

    def initiate_transfer(self, **_kwargs: Any) -> TransferInitiation:
        raise self.error

    def get_transaction(self, reference: str) -> Transaction:
        raise perr.NotFoundError("Transaction not found", status_code=404)


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (perr.InvalidBankCodeError("Invalid bank code"), "Invalid bank code"),
        (perr.AccountNotFoundError("Account not found"), "Account not found"),
        (perr.InsufficientFundsError("Insufficient funds"), "Insufficient funds"),
        (perr.WebhookNotConfiguredError("Webhook not configured"), "Webhook not configured"),
        (
            perr.IPNotAllowedError("Access denied. Your IP address is not allowed."),
            "Access denied. Your IP address is not allowed.",
        ),
    ],
)
def test_every_refusal_cause_is_recorded_failed(
    engine: Engine, error: Exception, cause: str
) -> None:
    """Each definite refusal raises PayoutRejectedError and records failed, not pending."""
    with pytest.raises(PayoutRejectedError) as caught:
        send_payout(
            engine,
            FakeClient(error),
            PayoutRequest(1_000, "058", "0123456789", "F-1"),
            now=utcnow(),
        )
    assert caught.value.cause == cause
    row = _row(engine, "F-1")
    assert (row.status, row.initiation, row.failure_reason) == ("failed", "rejected", cause)
    assert row.next_check_at is None


@pytest.mark.parametrize(
    "error",
    [
        perr.ProviderTimeoutError("timed out"),
        perr.ProviderUnavailableError("503", status_code=503),
        perr.UnexpectedResponseError("garbage", body="<html>"),
    ],
)
def test_lost_answer_leaves_the_intent_for_the_reconciler(engine: Engine, error: Exception) -> None:
    """A timeout, 5xx or odd answer keeps the intent pending and due after the grace."""
    with pytest.raises(PayoutPendingResolutionError) as caught:
        send_payout(
            engine,
            FakeClient(error),
            PayoutRequest(1_000, "058", "0123456789", "L-1"),
            now=utcnow(),
        )
    assert caught.value.kind is PayoutErrorKind.PENDING
    assert payout_status(caught.value) == 202
    row = _row(engine, "L-1")
    assert (row.status, row.initiation) == ("pending", "intent")
    assert row.next_check_at is not None
