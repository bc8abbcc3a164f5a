"""Bank-transfer collections (endpoints 5 and 6) against a real sandbox."""

from __future__ import annotations

import pytest

from provider import errors
from provider.client import ProviderClient
from provider.models import TransferStatus
from tests.integration.provider.conftest import Sandbox


def test_create_collection_then_look_it_up(sandbox: Sandbox, client: ProviderClient) -> None:
    """Endpoint 5 gives an account to pay into; endpoint 6 shows its pending transaction."""
    created = client.create_collection(
        reference="col-1", amount=500_000, customer_name="Ada Obi", meta={"order": 9}
    )
    assert created.reference == "col-1"
    assert len(created.account_number) == 10
    assert created.amount == 500_000 and created.fee is not None
    assert created.expires_at is not None
    pending = client.get_collection("col-1")
    assert pending.status is TransferStatus.PENDING
    assert pending.merchant_reference == "col-1"


def test_paid_collection_shows_successful(sandbox: Sandbox, client: ProviderClient) -> None:
    """A collection the customer paid in full is successful on lookup."""
    client.create_collection(reference="col-2", amount=10_000)
    sandbox.post("/_sandbox/collections/col-2/pay", {"amount": 10_000})
    paid = client.get_collection("col-2")
    assert paid.status is TransferStatus.SUCCESSFUL
    assert paid.amount == 10_000 and paid.completed_at is not None


def test_limit_1_only_ngn_is_sent(client: ProviderClient) -> None:
    """Limits 1: another currency is refused before sending."""
    with pytest.raises(errors.ProviderRequestError):
        client.create_collection(reference="col-usd", amount=100, currency="USD")


def test_unknown_collection_is_not_found(client: ProviderClient) -> None:
    """Endpoint 6 with an unknown reference is NotFoundError."""
    with pytest.raises(errors.NotFoundError):
        client.get_collection("col-missing")


def test_reused_collection_reference_is_refused(client: ProviderClient) -> None:
    """The sandbox refuses a reused collection reference with the duplicate-reference text."""
    client.create_collection(reference="col-dup", amount=100)
    with pytest.raises(errors.DuplicateReferenceError):
        client.create_collection(reference="col-dup", amount=100)
