"""Conformance: transfer initiation, fees, balance, lifecycle and lookups."""

from __future__ import annotations

import pytest

from sandbox.fees import transfer_fee
from tests.integration.sandbox.conftest import (
    DORMANT_ACCOUNT,
    ENQUIRY_FAILS_ACCOUNT,
    PENDING_ACCOUNT,
    SECOND_ACCOUNT,
    transfer_body,
    wait_until,
)


def _initiate(box, body):
    with box.client() as client:
        return client.post("/v1/transfer/initiate", json=body)


def _transaction(box, reference):
    with box.client() as client:
        return client.get(f"/v1/transaction/{reference}")


def test_initiate_answers_pending_with_fee_and_debits_amount_plus_fee(sandbox):
    """A good initiation answers 200 pending with the fee, and the wallet loses amount + fee."""
    balance = sandbox.world.balance
    response = _initiate(sandbox, transfer_body("t-ok", amount=250_000))
    data = response.json()["data"]
    assert response.status_code == 200
    assert response.json()["status"] == "success"
    assert set(data) == {"reference", "merchant_reference", "amount", "status", "fee"}
    assert data["merchant_reference"] == "t-ok"
    assert data["reference"].startswith("TRF_") and len(data["reference"]) == 20
    assert (data["amount"], data["status"], data["fee"]) == (250_000, "pending", 1_000)
    assert sandbox.world.balance == balance - 251_000


def test_refusal_webhook_not_configured(start_sandbox):
    """Without a webhook URL, initiation is refused with `Webhook not configured`."""
    box = start_sandbox()
    response = _initiate(box, transfer_body("t-nohook"))
    assert response.status_code == 400
    assert response.json() == {"status": "failed", "message": "Webhook not configured"}


def test_refusal_duplicate_reference(sandbox):
    """Reusing a reference is refused with `Duplicate reference` and moves nothing."""
    assert _initiate(sandbox, transfer_body("t-dup")).status_code == 200
    balance = sandbox.world.balance
    response = _initiate(sandbox, transfer_body("t-dup"))
    assert response.status_code == 400
    assert response.json() == {"status": "failed", "message": "Duplicate reference"}
    assert sandbox.world.balance == balance


def test_refusal_invalid_bank_code(shared_sandbox):
    """A bank code not in the bank list is refused with `Invalid bank code`."""
    body = transfer_body("t-bank")
    body["bank_code"] = "999"
    response = _initiate(shared_sandbox, body)
    assert response.status_code == 400
    assert response.json() == {"status": "failed", "message": "Invalid bank code"}


@pytest.mark.parametrize(
    "account",
    [("044", "0440000018"), ("057", "0440000017"), ENQUIRY_FAILS_ACCOUNT],
    ids=["bad-check-digit", "wrong-bank", "enquiry-fails-account"],
)
def test_refusal_account_not_found(shared_sandbox, account):
    """An account that does not exist at that bank is refused with `Account not found`."""
    response = _initiate(shared_sandbox, transfer_body("t-acct", account=account))
    assert response.status_code == 400
    assert response.json() == {"status": "failed", "message": "Account not found"}


def test_refusal_insufficient_funds_counts_the_fee(sandbox):
    """A balance equal to the amount (but not amount + fee) is `Insufficient funds`."""
    with sandbox.control() as control:
        control.post("/_sandbox/wallet", json={"balance": 100_000})
    refused = _initiate(sandbox, transfer_body("t-poor", amount=100_000))
    accepted = _initiate(sandbox, transfer_body("t-rich", amount=99_000))
    assert refused.status_code == 400
    assert refused.json() == {"status": "failed", "message": "Insufficient funds"}
    assert accepted.status_code == 200
    assert sandbox.world.balance == 0


def test_refusal_order_is_webhook_duplicate_bank_account_balance(sandbox):
    """With every cause present, the documented first one wins at each step."""
    assert _initiate(sandbox, transfer_body("t-order")).status_code == 200
    with sandbox.control() as control:
        control.post("/_sandbox/wallet", json={"balance": 0})
        everything = {"amount": 10**9, "bank_code": "999", "account_number": "1234567890"}
        messages = [_initiate(sandbox, {**everything, "reference": "t-order"}).json()["message"]]
        messages.append(_initiate(sandbox, {**everything, "reference": "t-new"}).json()["message"])
        bad_account = {**everything, "bank_code": "044", "reference": "t-new"}
        messages.append(_initiate(sandbox, bad_account).json()["message"])
        messages.append(_initiate(sandbox, transfer_body("t-new")).json()["message"])
        control.post("/_sandbox/webhook-url", json={"url": None})
        messages.insert(
            0, _initiate(sandbox, {**everything, "reference": "t-order"}).json()["message"]
        )
    assert messages == [
        "Webhook not configured",
        "Duplicate reference",
        "Invalid bank code",
        "Account not found",
        "Insufficient funds",
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("amount", True),
        ("amount", 100.0),
        ("amount", "100"),
        ("amount", 0),
        ("amount", -5),
        ("account_number", "123456789"),
        ("account_number", "12345678901"),
        ("account_number", "12345abcde"),
        ("account_number", 1234567890),
        ("bank_code", 44),
        ("reference", ""),
        ("reference", "x" * 101),
        ("reference", None),
    ],
)
def test_initiate_validation_is_422_naming_the_field(shared_sandbox, field, value):
    """A wrongly typed or out-of-range field is 422 with the field named in `errors`."""
    body = transfer_body("t-422")
    body[field] = value
    response = _initiate(shared_sandbox, body)
    assert response.status_code == 422
    assert response.json()["message"] == "Validation failed"
    assert field in response.json()["errors"]


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'"text"', b"", b"\xff\xfe"])
def test_body_that_is_not_a_json_object_is_422(shared_sandbox, raw):
    """Malformed JSON or a non-object body answers 422 with a `body` error."""
    with shared_sandbox.client() as client:
        response = client.post(
            "/v1/transfer/initiate", content=raw, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 422
    assert response.json() == {
        "status": "failed",
        "message": "Validation failed",
        "errors": {"body": response.json()["errors"]["body"]},
    }


def test_fee_schedule_tiers(sandbox):
    """The quoted fee follows the documented tiers: ₦10 / ₦25 / ₦50."""
    fees = [
        _initiate(sandbox, transfer_body(f"t-fee-{amount}", amount=amount)).json()["data"]["fee"]
        for amount in (500_000, 500_001, 5_000_000, 5_000_001)
    ]
    assert fees == [1_000, 2_500, 2_500, 5_000]
    assert fees == [transfer_fee(a) for a in (500_000, 500_001, 5_000_000, 5_000_001)]


def test_successful_transfer_keeps_amount_and_fee_debited(sandbox):
    """After success the lookup shows successful, completed_at set, and the debit stands."""
    balance = sandbox.world.balance
    _initiate(sandbox, transfer_body("t-succ", amount=10_000))
    data = wait_until(
        lambda: (
            (d := _transaction(sandbox, "t-succ").json()["data"])["status"] == "successful" and d
        )
    )
    assert data["completed_at"] is not None
    assert data["failure_reason"] is None
    assert sandbox.world.balance == balance - 11_000


def test_failed_transfer_refunds_amount_but_keeps_fee(sandbox):
    """The dormant test account fails after pending; the amount comes back, the fee does not."""
    balance = sandbox.world.balance
    _initiate(sandbox, transfer_body("t-dormant", amount=20_000, account=DORMANT_ACCOUNT))
    data = wait_until(
        lambda: (d := _transaction(sandbox, "t-dormant").json()["data"])["status"] == "failed" and d
    )
    assert data["failure_reason"] == "Beneficiary account is dormant"
    assert data["fee"] == 1_000
    assert sandbox.world.balance == balance - 1_000


def test_lookup_by_provider_and_merchant_reference_match(sandbox):
    """GET /v1/transaction/{reference} finds the same transfer by either reference."""
    provider_ref = _initiate(sandbox, transfer_body("t-both")).json()["data"]["reference"]
    by_merchant = _transaction(sandbox, "t-both").json()["data"]
    by_provider = _transaction(sandbox, provider_ref).json()["data"]
    assert by_merchant["reference"] == provider_ref
    assert by_merchant["reference"] == by_provider["reference"]
    assert set(by_merchant) == {
        "reference", "merchant_reference", "type", "amount", "fee", "status",
        "failure_reason", "created_at", "completed_at",
    }  # fmt: skip
    assert by_merchant["type"] == "transfer"


def test_unknown_reference_is_404(shared_sandbox):
    """An unknown reference answers 404 Transaction not found."""
    response = _transaction(shared_sandbox, "nothing-here")
    assert response.status_code == 404
    assert response.json() == {"status": "failed", "message": "Transaction not found"}


def test_never_completes_until_forced_then_409(start_sandbox, receiver):
    """With complete_after=None a transfer stays pending; forcing completes it once, then 409."""
    box = start_sandbox(webhook_url=receiver.url, complete_after=None)
    _initiate(box, transfer_body("t-force", account=SECOND_ACCOUNT))
    assert _transaction(box, "t-force").json()["data"]["status"] == "pending"
    with box.control() as control:
        forced = control.post(
            "/_sandbox/transfers/t-force/complete",
            json={"status": "failed", "failure_reason": "Bank rejected"},
        )
        again = control.post("/_sandbox/transfers/t-force/complete", json={"status": "successful"})
        unknown = control.post("/_sandbox/transfers/nope/complete", json={"status": "successful"})
    assert forced.status_code == 200
    assert forced.json()["status"] == "failed"
    assert again.status_code == 409
    assert unknown.status_code == 404
    wait_until(lambda: receiver.deliveries)
    assert receiver.bodies()[0]["data"]["failure_reason"] == "Bank rejected"


def test_stays_pending_test_account(sandbox):
    """The stays-pending test account is still pending after others have completed."""
    _initiate(sandbox, transfer_body("t-slow", account=PENDING_ACCOUNT))
    _initiate(sandbox, transfer_body("t-fast"))
    wait_until(lambda: _transaction(sandbox, "t-fast").json()["data"]["status"] == "successful")
    assert _transaction(sandbox, "t-slow").json()["data"]["status"] == "pending"


@pytest.mark.parametrize(
    "raw",
    [b'{"amount": NaN}', b'{"amount": Infinity}', b'{"amount": 1e999}', b"[" * 50_000],
    ids=["nan", "infinity", "overflow-float", "deep-nesting"],
)
def test_hostile_json_is_422_not_500(shared_sandbox, raw):
    """Non-finite numbers and absurdly deep nesting answer 422, never a server error."""
    with shared_sandbox.client() as client:
        response = client.post("/v1/transfer/initiate", content=raw)
    assert response.status_code == 422
