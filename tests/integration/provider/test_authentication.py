"""Authentication and IP whitelisting against a real sandbox (spec, Authentication)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from provider import errors
from provider.client import ProviderClient
from tests.integration.provider.conftest import Sandbox

EVERY_ENDPOINT: list[Callable[[ProviderClient], object]] = [
    lambda c: c.create_virtual_account(type="static", customer={"first_name": "Ada"}),
    lambda c: c.list_virtual_accounts(),
    lambda c: c.get_virtual_account("va_x"),
    lambda c: c.deactivate_virtual_account("va_x"),
    lambda c: c.create_collection(reference="c-auth", amount=10_000),
    lambda c: c.get_collection("c-auth"),
    lambda c: c.get_transaction("t-auth"),
    lambda c: c.initiate_transfer(
        amount=1, bank_code="044", account_number="0440000017", reference="t-auth"
    ),
    lambda c: c.account_enquiry("0440000017", "044"),
    lambda c: c.banks(),
]


@pytest.mark.parametrize("call", EVERY_ENDPOINT)
def test_every_endpoint_refuses_an_unknown_key(
    sandbox: Sandbox, call: Callable[[ProviderClient], object]
) -> None:
    """Authentication 6: an invalid key is 401 on all ten endpoints, and never retried."""
    with (
        sandbox.client("sk_test_notARealKey000000") as client,
        pytest.raises(errors.AuthenticationError) as caught,
    ):
        call(client)
    assert caught.value.status_code == 401
    assert sandbox.sleeps == []


def test_401_cause_wrong_environment_key(sandbox: Sandbox) -> None:
    """Authentication 4: a live key against the sandbox fails authentication."""
    assert sandbox.config.other_secret_key.startswith("sk_live_")
    with (
        sandbox.client(sandbox.config.other_secret_key) as client,
        pytest.raises(errors.AuthenticationError),
    ):
        client.get_transaction("anything")


def test_401_cause_sandbox_key_against_production(start_sandbox: Callable[..., Sandbox]) -> None:
    """Authentication 4: a sandbox key against production fails authentication."""
    production = start_sandbox(environment="production")
    with (
        production.client(production.config.other_secret_key) as client,
        pytest.raises(errors.AuthenticationError),
    ):
        client.banks()
    with production.client() as client:
        assert client.banks()


def test_401_cause_expired_key(start_sandbox: Callable[..., Sandbox]) -> None:
    """Authentication 5/6: a regenerated (expired) key is refused."""
    expired = "sk_test_expiredKey0000000"
    box = start_sandbox(expired_keys=(expired,))
    with box.client(expired) as client, pytest.raises(errors.AuthenticationError):
        client.banks()


def test_401_cause_public_key_on_a_server_endpoint(sandbox: Sandbox) -> None:
    """Authentication 2-3: the public key does not open server-side endpoints."""
    with (
        sandbox.client(sandbox.config.public_key) as client,
        pytest.raises(errors.AuthenticationError),
    ):
        client.get_transaction("anything")


def _enable_whitelist(sandbox: Sandbox) -> None:
    sandbox.post("/_sandbox/whitelist", {"enabled": True})


def _add_entry(sandbox: Sandbox, ip: str) -> None:
    body = {"ip": ip, "description": "office server", "otp": sandbox.config.otp}
    sandbox.post("/_sandbox/whitelist/entries", body)


def _transfer(sandbox: Sandbox, client: ProviderClient, reference: str) -> object:
    bank_code, number = sandbox.good_account()
    return client.initiate_transfer(
        amount=10_000, bank_code=bank_code, account_number=number, reference=reference
    )


def test_whitelist_rule_5_enabled_and_empty(sandbox: Sandbox, client: ProviderClient) -> None:
    """IP whitelisting 5: on with an empty list refuses every transfer (403, its own text)."""
    _enable_whitelist(sandbox)
    before = sandbox.wallet()
    with pytest.raises(errors.IPWhitelistEmptyError) as caught:
        _transfer(sandbox, client, "wl-empty")
    assert caught.value.message == (
        "Access denied. IP whitelisting is enabled but no IP addresses are configured."
    )
    assert caught.value.status_code == 403
    assert sandbox.wallet() == before


def test_whitelist_rule_4_address_not_listed(sandbox: Sandbox, client: ProviderClient) -> None:
    """IP whitelisting 4: an origin not on the list is refused; no funds move."""
    _add_entry(sandbox, "10.1.2.3")
    _enable_whitelist(sandbox)
    before = sandbox.wallet()
    with pytest.raises(errors.IPNotAllowedError) as caught:
        _transfer(sandbox, client, "wl-no")
    assert caught.value.message == "Access denied. Your IP address is not allowed."
    assert sandbox.wallet() == before


def test_whitelist_listed_address_may_transfer(sandbox: Sandbox, client: ProviderClient) -> None:
    """IP whitelisting 6: an exact match is allowed."""
    _add_entry(sandbox, "127.0.0.1")
    _enable_whitelist(sandbox)
    assert _transfer(sandbox, client, "wl-yes")


def test_whitelist_rule_1_applies_only_to_initiation(
    sandbox: Sandbox, client: ProviderClient
) -> None:
    """IP whitelisting 1: with the whitelist on and empty, other endpoints still answer."""
    _enable_whitelist(sandbox)
    bank_code, number = sandbox.good_account()
    assert client.banks()
    assert client.account_enquiry(number, bank_code).account_number == number
    assert client.list_virtual_accounts().total == 0
