"""Banks and account enquiry (endpoints 9 and 10) against a real sandbox."""

from __future__ import annotations

import pytest

from provider.client import ProviderClient
from provider.errors import EnquiryFailedError, ProviderUnavailableError, RateLimitedError
from provider.nuban import is_valid_nuban
from tests.integration.provider.conftest import Sandbox


def test_banks_lists_names_and_codes(client: ProviderClient) -> None:
    """Endpoint 10 answers an array of banks with name and code."""
    banks = client.banks()
    assert len(banks) > 1
    assert all(bank.name and bank.code for bank in banks)
    assert len({bank.code for bank in banks}) == len(banks)


def test_rule_4_bank_codes_from_the_list_are_accepted_by_enquiry(
    sandbox: Sandbox, client: ProviderClient
) -> None:
    """Rule 4: endpoint 10 returns the codes endpoint 9 accepts."""
    codes = {bank.code for bank in client.banks()}
    bank_code, number = sandbox.good_account()
    assert bank_code in codes
    assert client.account_enquiry(number, bank_code).account_number == number


def test_account_enquiry_returns_the_account_name(sandbox: Sandbox, client: ProviderClient) -> None:
    """Endpoint 9 answers bank_name, account_name and account_number."""
    account = sandbox.accounts("succeeds")[0]
    result = client.account_enquiry(account["account_number"], account["bank_code"])
    assert result.account_name == account["account_name"]
    assert result.bank_name == account["bank_name"]


def test_documented_test_accounts_pass_our_nuban_check(sandbox: Sandbox) -> None:
    """Two independent readings agree: every sandbox test account has a valid check digit."""
    listed = sandbox.control.get("/_sandbox/accounts").json()["accounts"]
    assert listed
    assert all(is_valid_nuban(a["account_number"], a["bank_code"]) for a in listed)


def test_error_enquiry_finds_no_account(sandbox: Sandbox, client: ProviderClient) -> None:
    """Errors: an enquiry that finds no account is EnquiryFailedError."""
    account = sandbox.accounts("enquiry_fails")[0]
    with pytest.raises(EnquiryFailedError) as caught:
        client.account_enquiry(account["account_number"], account["bank_code"])
    assert caught.value.message == "Account name enquiry failed"


def test_error_account_number_at_the_wrong_bank_fails_enquiry(
    sandbox: Sandbox, client: ProviderClient
) -> None:
    """Errors: an account number is valid at one bank only; the wrong bank fails the enquiry."""
    bank_code, number = sandbox.good_account()
    other = next(b.code for b in client.banks() if b.code != bank_code)
    with pytest.raises(EnquiryFailedError):
        client.account_enquiry(number, other)


def test_limit_6_repeated_enquiries_are_answered_from_the_cache(sandbox: Sandbox) -> None:
    """Limits 6: with the provider allowing one enquiry per account, the cache avoids a 429."""
    sandbox.post("/_sandbox/faults", {"enquiry_rate_limit": 1})
    bank_code, number = sandbox.good_account()
    with sandbox.client() as cached:
        first = cached.account_enquiry(number, bank_code)
        assert cached.account_enquiry(number, bank_code) == first
    with (
        sandbox.client(enquiry_cache_ttl=0, max_retries=0) as uncached,
        pytest.raises(RateLimitedError) as caught,
    ):
        uncached.account_enquiry(number, bank_code)
    assert caught.value.retry_after is not None and caught.value.retry_after > 0


def test_rule_5_unavailable_enquiry_is_retried_then_unavailable(sandbox: Sandbox) -> None:
    """Rule 5: endpoint 9 may be unavailable; the GET is retried, then surfaces as transient."""
    sandbox.post("/_sandbox/faults", {"enquiry_unavailable": 1.0})
    bank_code, number = sandbox.good_account()
    with sandbox.client(max_retries=2) as client, pytest.raises(ProviderUnavailableError) as caught:
        client.account_enquiry(number, bank_code)
    assert caught.value.status_code == 503
    assert len(sandbox.sleeps) == 2
