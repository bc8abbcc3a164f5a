"""Conformance: bank-transfer collections (endpoints 5 and 6) and the pay control route."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sandbox.faults import Faults
from sandbox.fees import collection_fee


def _create(client, reference, amount=100_000, **extra):
    body = {"currency": "NGN", "reference": reference, "amount": amount, **extra}
    return client.post("/v1/collection/bank-transfer", json=body)


def test_create_answers_the_spec_fields(sandbox):
    """A collection answers exactly the spec's seven data fields."""
    with sandbox.client() as client:
        response = _create(client, "c-1", customer_name="Ada Obi", meta={"cart": 1})
    data = response.json()["data"]
    assert response.status_code == 200
    assert set(data) == {
        "reference", "account_number", "account_name", "bank_name", "amount", "fee", "expires_at",
    }  # fmt: skip
    assert (data["reference"], data["amount"], data["fee"]) == ("c-1", 100_000, 1_000)


@pytest.mark.parametrize(
    "body",
    [
        {"currency": "USD", "reference": "c-x", "amount": 100},
        {"reference": "c-x", "amount": 100},
        {"currency": "NGN", "amount": 100},
        {"currency": "NGN", "reference": "c-x", "amount": 0},
        {"currency": "NGN", "reference": "c-x", "amount": "100"},
        {"currency": "NGN", "reference": "c-x", "amount": 100, "customer_email": 5},
        {"currency": "NGN", "reference": "c-x", "amount": 100, "meta": "x"},
    ],
)
def test_create_validation_is_422(shared_sandbox, body):
    """Non-NGN currency, missing or wrongly typed fields answer 422."""
    with shared_sandbox.client() as client:
        assert client.post("/v1/collection/bank-transfer", json=body).status_code == 422


def test_duplicate_collection_reference_is_400(sandbox):
    """A reused collection reference is refused with Duplicate reference."""
    with sandbox.client() as client:
        _create(client, "c-dup")
        response = _create(client, "c-dup")
    assert response.status_code == 400
    assert response.json() == {"status": "failed", "message": "Duplicate reference"}


def test_pending_until_paid_then_successful_and_credited(sandbox):
    """The collection is pending until paid; payment credits amount minus fee to the wallet."""
    balance = sandbox.world.balance
    with sandbox.client() as client, sandbox.control() as control:
        _create(client, "c-pay", amount=300_000)
        before = client.get("/v1/collection/c-pay").json()["data"]
        paid = control.post("/_sandbox/collections/c-pay/pay", json={"amount": 300_000})
        after = client.get("/v1/collection/c-pay").json()["data"]
        by_provider = client.get(f"/v1/transaction/{after['reference']}").json()["data"]
        again = control.post("/_sandbox/collections/c-pay/pay", json={"amount": 1})
    assert before["status"] == "pending"
    assert paid.status_code == 200
    assert (after["status"], after["type"], after["fee"]) == ("successful", "collection", 3_000)
    assert by_provider == after
    assert sandbox.world.balance == balance + 300_000 - collection_fee(300_000)
    assert again.status_code == 409


def test_underpayment_fails_and_credits_nothing(sandbox):
    """Paying less than the amount fails the collection with a reason; the wallet is unchanged."""
    balance = sandbox.world.balance
    with sandbox.client() as client, sandbox.control() as control:
        _create(client, "c-under", amount=10_000)
        control.post("/_sandbox/collections/c-under/pay", json={"amount": 9_999})
        data = client.get("/v1/collection/c-under").json()["data"]
    assert data["status"] == "failed"
    assert "Underpaid" in data["failure_reason"]
    assert data["amount"] == 9_999
    assert sandbox.world.balance == balance


def test_expired_collection_cannot_be_paid(start_sandbox, receiver):
    """After expiry the collection is failed (Collection expired) and a payment is 409."""
    box = start_sandbox(webhook_url=receiver.url, collection_ttl=0.0)
    with box.client() as client, box.control() as control:
        _create(client, "c-old")
        paid = control.post("/_sandbox/collections/c-old/pay", json={"amount": 100_000})
        data = client.get("/v1/collection/c-old").json()["data"]
    assert paid.status_code == 409
    assert (data["status"], data["failure_reason"]) == ("failed", "Collection expired")


def test_unknown_collection_is_404(shared_sandbox):
    """An unknown collection reference answers 404 Transaction not found."""
    with shared_sandbox.client() as client:
        response = client.get("/v1/collection/none")
    assert response.status_code == 404
    assert response.json() == {"status": "failed", "message": "Transaction not found"}


def test_collection_late_fault_reports_the_payment_after_expiry(start_sandbox, receiver):
    """With `collection_late` the payment succeeds but completes after `expires_at`."""
    box = start_sandbox(
        webhook_url=receiver.url,
        collection_ttl=600.0,
        faults=Faults(collection_late=1.0, collection_late_seconds=90),
    )
    with box.client() as client, box.control() as control:
        created = _create(client, "c-late").json()["data"]
        control.post("/_sandbox/collections/c-late/pay", json={"amount": 100_000})
        data = client.get("/v1/collection/c-late").json()["data"]
    expires = datetime.fromisoformat(created["expires_at"].replace("Z", "+00:00"))
    completed = datetime.fromisoformat(data["completed_at"].replace("Z", "+00:00"))
    assert data["status"] == "successful"
    assert (completed - expires).total_seconds() == pytest.approx(90, abs=1)


def test_fee_drift_charges_more_than_the_collection_quote(start_sandbox, receiver):
    """With `fee_drift` a paid collection's fee is the quote plus 500 kobo."""
    box = start_sandbox(webhook_url=receiver.url, faults=Faults(fee_drift=1.0))
    with box.client() as client, box.control() as control:
        quoted = _create(client, "c-fee").json()["data"]["fee"]
        control.post("/_sandbox/collections/c-fee/pay", json={"amount": 100_000})
        data = client.get("/v1/collection/c-fee").json()["data"]
    assert data["fee"] == quoted + 500


def test_collection_ttl_sets_the_expiry(start_sandbox, receiver):
    """`collection_ttl` (`--collection-ttl`) is the time from creation to `expires_at`."""
    box = start_sandbox(webhook_url=receiver.url, collection_ttl=120.0)
    with box.client() as client:
        before = datetime.now(UTC)
        created = _create(client, "c-ttl").json()["data"]
    expires = datetime.fromisoformat(created["expires_at"].replace("Z", "+00:00"))
    assert (expires - before).total_seconds() == pytest.approx(120, abs=2)
