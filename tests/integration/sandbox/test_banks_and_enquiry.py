"""Conformance: bank list and account name enquiry (endpoints 9 and 10), plus routing."""

from __future__ import annotations

import pytest

from tests.integration.sandbox.conftest import ENQUIRY_FAILS_ACCOUNT, GOOD_ACCOUNT, transfer_body


def test_bank_list_codes_are_the_ones_initiate_accepts(sandbox):
    """Every listed bank has name and code, and initiate accepts each listed code."""
    with sandbox.client() as client:
        banks = client.get("/v1/banks").json()["data"]
        codes = {b["code"] for b in banks}
        for bank in banks:
            body = {**transfer_body(f"b-{bank['code']}"), "bank_code": bank["code"]}
            message = client.post("/v1/transfer/initiate", json=body).json().get("message")
            assert message != "Invalid bank code"
    assert all(set(b) == {"name", "code"} for b in banks)
    assert {"044", "058", "057", "011", "033"} <= codes


def test_enquiry_of_a_test_account_answers_its_name(shared_sandbox):
    """A known test account at its bank answers bank_name, account_name, account_number."""
    with shared_sandbox.client() as client:
        response = client.get(
            "/v1/account-enquiry",
            params={"account_number": GOOD_ACCOUNT[1], "bank_code": GOOD_ACCOUNT[0]},
        )
    assert response.status_code == 200
    assert response.json()["data"] == {
        "bank_name": "Access Bank",
        "account_name": "ADAEZE OKAFOR",
        "account_number": GOOD_ACCOUNT[1],
    }


@pytest.mark.parametrize(
    "account",
    [("057", GOOD_ACCOUNT[1]), ("044", "0440000099"), ENQUIRY_FAILS_ACCOUNT, ("999", "0440000017")],
    ids=["wrong-bank", "unknown-number", "failing-account", "unknown-bank"],
)
def test_failed_enquiry_is_400(shared_sandbox, account):
    """Wrong bank, unknown number or the failing account answer 400 Account name enquiry failed."""
    with shared_sandbox.client() as client:
        response = client.get(
            "/v1/account-enquiry", params={"account_number": account[1], "bank_code": account[0]}
        )
    assert response.status_code == 400
    assert response.json() == {"status": "failed", "message": "Account name enquiry failed"}


@pytest.mark.parametrize(
    "params",
    [
        {"account_number": "123", "bank_code": "044"},
        {"bank_code": "044"},
        {"account_number": "0440000017"},
    ],
)
def test_enquiry_needs_ten_digits_and_a_bank_code(shared_sandbox, params):
    """A missing bank code or an account number that is not 10 digits answers 422."""
    with shared_sandbox.client() as client:
        assert client.get("/v1/account-enquiry", params=params).status_code == 422


def test_unknown_route_and_wrong_method_are_json(shared_sandbox):
    """Unknown routes answer 404 JSON and wrong methods 405 JSON."""
    with shared_sandbox.client() as client:
        missing = client.get("/v2/banks")
        wrong = client.put("/v1/banks")
    assert (missing.status_code, missing.json()["status"]) == (404, "failed")
    assert (wrong.status_code, wrong.json()["message"]) == (405, "Method not allowed")


def test_accounts_route_documents_behaviours(shared_sandbox):
    """GET /_sandbox/accounts lists every behaviour, with a valid account for each."""
    with shared_sandbox.control() as control:
        accounts = control.get("/_sandbox/accounts").json()["accounts"]
    behaviours = {a["behaviour"] for a in accounts}
    assert behaviours == {"succeeds", "enquiry_fails", "fails_after_pending", "stays_pending"}
