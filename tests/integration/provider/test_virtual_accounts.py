"""Virtual accounts (endpoints 1-4) against a real sandbox."""

from __future__ import annotations

import pytest

from provider import errors
from provider.client import ProviderClient
from provider.models import Customer, VirtualAccountStatus, VirtualAccountType


def test_create_static_account(client: ProviderClient) -> None:
    """Endpoint 1: 201, an active account with a uid and an account number."""
    account = client.create_virtual_account(
        type="static",
        customer=Customer(first_name="Ada", last_name="Obi", email="ada@example.com"),
        meta={"order": "A-1"},
    )
    assert account.uid
    assert account.type is VirtualAccountType.STATIC
    assert account.status is VirtualAccountStatus.ACTIVE
    assert account.account_number is not None and len(account.account_number) == 10
    assert account.customer is not None and account.customer.first_name == "Ada"
    assert account.meta == {"order": "A-1"}


def test_rule_1_validation_error_is_422(client: ProviderClient) -> None:
    """Rule 1: a creation failing validation (dynamic without an amount here) is 422."""
    with pytest.raises(errors.ProviderValidationError) as caught:
        client.create_virtual_account(type="dynamic", customer={"first_name": "Ada"})
    assert caught.value.status_code == 422
    assert "expected_amount" in caught.value.errors


def test_get_and_deactivate(client: ProviderClient) -> None:
    """Endpoints 3 and 4: active → inactive by deactivation, and get shows it."""
    created = client.create_virtual_account(
        type="dynamic", customer={"first_name": "Musa"}, expected_amount=250_000
    )
    assert client.get_virtual_account(created.uid).expected_amount == 250_000
    deactivated = client.deactivate_virtual_account(created.uid)
    assert deactivated.status is VirtualAccountStatus.INACTIVE
    assert client.get_virtual_account(created.uid).status is VirtualAccountStatus.INACTIVE


def test_unknown_uid_is_not_found(client: ProviderClient) -> None:
    """Getting or deactivating an unknown uid is NotFoundError."""
    with pytest.raises(errors.NotFoundError):
        client.get_virtual_account("va_missing")
    with pytest.raises(errors.NotFoundError):
        client.deactivate_virtual_account("va_missing")


def test_list_filters_by_type_and_status(client: ProviderClient) -> None:
    """Endpoint 2 filters: type static/dynamic, status active/inactive."""
    static = client.create_virtual_account(type="static", customer={"first_name": "A"})
    client.create_virtual_account(type="dynamic", customer={}, expected_amount=1)
    client.deactivate_virtual_account(static.uid)
    inactive = client.list_virtual_accounts(status="inactive")
    dynamic = client.list_virtual_accounts(type="dynamic")
    assert [a.uid for a in inactive.items] == [static.uid]
    assert inactive.total == 1
    assert [a.type for a in dynamic.items] == [VirtualAccountType.DYNAMIC]


def test_iterator_walks_more_than_one_page(client: ProviderClient) -> None:
    """Pagination: seven accounts at three per page come back complete through the iterator."""
    created = [
        client.create_virtual_account(type="static", customer={"reference": f"cust-{n}"}).uid
        for n in range(7)
    ]
    page_three = client.list_virtual_accounts(page=3, per_page=3)
    assert (page_three.page, page_three.total, len(page_three.items)) == (3, 7, 1)
    assert [a.uid for a in client.iter_virtual_accounts(per_page=3)] == created
