"""Transfer initiation (endpoint 8), its five refusal causes and lookups (endpoint 7)."""

from __future__ import annotations

import pytest

from provider import errors
from provider.client import ProviderClient
from provider.models import TransferInitiation, TransferStatus
from tests.integration.provider.conftest import Sandbox


def _send(
    client: ProviderClient, sandbox: Sandbox, reference: str, **change: object
) -> TransferInitiation:
    bank_code, number = sandbox.good_account()
    args: dict[str, object] = {
        "amount": 100_000,
        "bank_code": bank_code,
        "account_number": number,
        "reference": reference,
        **change,
    }
    return client.initiate_transfer(**args)  # type: ignore[arg-type]


def test_initiation_answers_pending_with_a_fee(sandbox: Sandbox, client: ProviderClient) -> None:
    """States: an accepted initiation is `pending` with the provider's reference and a fee."""
    before = sandbox.wallet()
    result = client.initiate_transfer(
        amount=100_000,
        bank_code=sandbox.good_account()[0],
        account_number=sandbox.good_account()[1],
        reference="pay-1",
    )
    assert result.status is TransferStatus.PENDING
    assert result.merchant_reference == "pay-1"
    assert result.reference and result.reference != "pay-1"
    assert result.amount == 100_000 and result.fee > 0
    # Limits 4: amount and fee both leave the wallet.
    assert sandbox.wallet() == before - result.amount - result.fee


def test_cause_insufficient_funds(sandbox: Sandbox, client: ProviderClient) -> None:
    """Insufficient funds: wallet below amount plus fee."""
    sandbox.post("/_sandbox/wallet", {"balance": 100_000})  # the fee does not fit
    with pytest.raises(errors.InsufficientFundsError) as caught:
        _send(client, sandbox, "pay-poor")
    assert caught.value.cause == "Insufficient funds"
    assert sandbox.wallet() == 100_000


def test_cause_duplicate_reference(sandbox: Sandbox, client: ProviderClient) -> None:
    """Duplicate reference: a reference is accepted once."""
    _send(client, sandbox, "pay-dup")
    before = sandbox.wallet()
    with pytest.raises(errors.DuplicateReferenceError):
        _send(client, sandbox, "pay-dup")
    assert sandbox.wallet() == before


def test_cause_invalid_bank_code(sandbox: Sandbox, client: ProviderClient) -> None:
    """Invalid bank code: a code endpoint 10 does not list."""
    codes = {bank.code for bank in client.banks()}
    assert "999" not in codes
    with pytest.raises(errors.InvalidBankCodeError):
        _send(client, sandbox, "pay-bank", bank_code="999")


def test_cause_account_not_found(sandbox: Sandbox, client: ProviderClient) -> None:
    """Account not found: a well-formed number no bank holds."""
    with pytest.raises(errors.AccountNotFoundError):
        _send(client, sandbox, "pay-nobody", account_number="0000000000")


def test_cause_webhook_not_configured(sandbox: Sandbox, client: ProviderClient) -> None:
    """Rule 3: without a webhook URL transfers are refused."""
    sandbox.post("/_sandbox/webhook-url", {"url": None})
    with pytest.raises(errors.WebhookNotConfiguredError):
        _send(client, sandbox, "pay-nohook")


def test_transaction_lookup_by_either_reference(sandbox: Sandbox, client: ProviderClient) -> None:
    """Endpoint 7 returns the transfer by the provider's reference (and, here, the merchant's)."""
    sent = _send(client, sandbox, "pay-look")
    by_provider = client.get_transaction(sent.reference)
    by_merchant = client.get_transaction("pay-look")
    assert by_provider.status is TransferStatus.PENDING
    assert by_provider.merchant_reference == "pay-look"
    assert by_provider.amount == 100_000
    assert by_merchant.reference == by_provider.reference
    assert by_provider.created_at is not None and by_provider.completed_at is None


def test_transaction_lookup_after_success(sandbox: Sandbox, client: ProviderClient) -> None:
    """States: pending → successful shows on the lookup with completed_at."""
    sent = _send(client, sandbox, "pay-ok")
    sandbox.post(f"/_sandbox/transfers/{sent.reference}/complete", {"status": "successful"})
    record = client.get_transaction(sent.reference)
    assert record.status is TransferStatus.SUCCESSFUL
    assert record.completed_at is not None and record.failure_reason is None


def test_limit_7_failed_transfer_still_shows_its_fee(
    sandbox: Sandbox, client: ProviderClient
) -> None:
    """States and Limits 7: a failed transfer has a failure_reason and its fee."""
    sent = _send(client, sandbox, "pay-fail")
    body = {"status": "failed", "failure_reason": "Beneficiary account is dormant"}
    sandbox.post(f"/_sandbox/transfers/{sent.reference}/complete", body)
    record = client.get_transaction(sent.reference)
    assert record.status is TransferStatus.FAILED
    assert record.failure_reason == "Beneficiary account is dormant"
    assert record.fee == sent.fee


def test_unknown_reference_is_not_found(client: ProviderClient) -> None:
    """An unknown reference answers 404 Transaction not found."""
    with pytest.raises(errors.NotFoundError) as caught:
        client.get_transaction("never-sent")
    assert caught.value.message == "Transaction not found"
    assert caught.value.status_code == 404
