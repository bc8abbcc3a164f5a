"""Requests refused before sending: ProviderRequestError, and nothing reaches the wire."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from provider.client import ProviderClient
from provider.errors import ProviderRequestError
from tests.unit.provider.support import BASE, INITIATION, SECRET, Script, ok, sync_client


def _transfer(**change: Any) -> Callable[[ProviderClient], object]:
    args: dict[str, Any] = {
        "amount": 100_000,
        "bank_code": "058",
        "account_number": "0000000018",
        "reference": "m-1",
        **change,
    }
    return lambda client: client.initiate_transfer(**args)


REFUSED: list[Callable[[ProviderClient], object]] = [
    _transfer(account_number="123456789"),
    _transfer(account_number="12345678901"),
    _transfer(account_number="12345abcde"),
    _transfer(account_number="\uff10" * 10),  # full-width digits are not ASCII digits
    _transfer(account_number=1234567890),
    _transfer(amount=True),
    _transfer(amount=1000.0),
    _transfer(amount="1000"),
    _transfer(amount=-1),
    _transfer(amount=0),
    _transfer(amount=2**63),
    _transfer(reference=""),
    _transfer(reference="   "),
    _transfer(reference=" m-1"),
    _transfer(reference="m\n1"),
    _transfer(bank_code=""),
    _transfer(bank_code="05 8"),
    lambda c: c.account_enquiry("000000001", "058"),
    lambda c: c.account_enquiry("0000000018", ""),
    lambda c: c.create_collection(reference="c-1", amount=5000, currency="USD"),
    lambda c: c.create_collection(reference="c-1", amount=50.5),  # type: ignore[arg-type]
    lambda c: c.create_collection(reference="", amount=5000),
    lambda c: c.create_collection(reference="c-1", amount=5000, meta=["x"]),  # type: ignore[arg-type]
    lambda c: c.create_collection(reference="c-1", amount=5000, meta={"x": object()}),
    lambda c: c.get_transaction(""),
    lambda c: c.get_transaction(".."),
    lambda c: c.get_collection("."),
    lambda c: c.get_virtual_account(""),
    lambda c: c.deactivate_virtual_account(" "),
    lambda c: c.create_virtual_account(type="weekly", customer={}),
    lambda c: c.create_virtual_account(type="static", customer=None),  # type: ignore[arg-type]
    lambda c: c.create_virtual_account(type="dynamic", customer={}, expected_amount=1.5),  # type: ignore[arg-type]
    lambda c: c.list_virtual_accounts(type="weekly"),
    lambda c: c.list_virtual_accounts(status="closed"),
    lambda c: c.list_virtual_accounts(page=0),
    lambda c: c.list_virtual_accounts(per_page=101),
    lambda c: c.iter_virtual_accounts(per_page=0),
]


@pytest.mark.parametrize("call", REFUSED)
def test_bad_arguments_are_refused_before_sending(call: Callable[[ProviderClient], object]) -> None:
    """Each malformed argument raises ProviderRequestError and sends nothing."""
    script = Script(ok({}))
    client, _ = sync_client(script)
    with pytest.raises(ProviderRequestError):
        call(client)
    assert script.requests == []


def test_largest_amount_is_accepted() -> None:
    """2^63-1 kobo is the largest amount allowed (PRODUCT.md, Numbers)."""
    script = Script(ok({**INITIATION, "amount": 2**63 - 1}))
    client, _ = sync_client(script)
    _transfer(amount=2**63 - 1)(client)
    assert json.loads(script.requests[0].content)["amount"] == 2**63 - 1


@pytest.mark.parametrize("key", ["", "sk test", "sk_\nx", SecretStr("")])
def test_malformed_secret_key_is_refused_without_echo(key: object) -> None:
    """A bad key is refused at construction, and the message does not repeat it."""
    with pytest.raises(ProviderRequestError) as caught:
        ProviderClient(BASE, key)  # type: ignore[arg-type]
    assert "sk" not in str(caught.value)


@pytest.mark.parametrize("url", ["ftp://provider.test", "provider.test", "http://", ""])
def test_base_url_must_be_http(url: str) -> None:
    """Only absolute http(s) base addresses are accepted."""
    with pytest.raises(ProviderRequestError):
        ProviderClient(url, SECRET)


def test_secret_str_key_is_accepted() -> None:
    """A SecretStr from settings can be passed as it is."""
    script = Script(ok([]))
    client = ProviderClient(BASE, SecretStr(SECRET), transport=httpx.MockTransport(script))
    client.banks()
    assert script.requests[0].headers["Authorization"] == f"Bearer {SECRET}"
