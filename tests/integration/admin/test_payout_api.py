"""`POST /api/transfers` pays out through a real sandbox, and refusals never look pending."""

from __future__ import annotations

import json
from typing import Any

import httpx
from sqlalchemy import Engine

from tests.support.apps import ADMIN, payout_stack

AUTH = {"authorization": f"Bearer {ADMIN}"}
GOOD = {"amount": 250_000, "bank_code": "044", "account_number": "0440000017"}


def test_a_payout_is_201_then_200_when_repeated(stack: tuple[str, str]) -> None:
    """The first request pays out; an identical repeat returns it without paying again."""
    url, sandbox_url = stack
    first = httpx.post(f"{url}/api/transfers", json={**GOOD, "reference": "PAY-1"}, headers=AUTH)
    again = httpx.post(f"{url}/api/transfers", json={**GOOD, "reference": "PAY-1"}, headers=AUTH)
    paid = [
        t
        for t in httpx.get(f"{sandbox_url}/_sandbox/transfers").json()["transfers"]
        if t["merchant_reference"] == "PAY-1"
    ]
    assert first.status_code == 201, first.text
    assert first.json()["status"] == "pending" and first.json()["fee"] == 1000
    assert first.json()["account_name"] == "ADAEZE OKAFOR"
    assert (
        again.status_code == 200
        and again.json()["provider_reference"] == first.json()["provider_reference"]
    )
    assert len(paid) == 1


def test_refusals_are_clear_errors_and_never_pending(stack: tuple[str, str]) -> None:
    """A failed enquiry or insufficient funds is an error; the ledger never shows it pending."""
    url, sandbox_url = stack
    enquiry = httpx.post(
        f"{url}/api/transfers",
        headers=AUTH,
        json={
            "amount": 100,
            "bank_code": "058",
            "account_number": "0589999912",
            "reference": "PAY-2",
        },
    )
    httpx.post(f"{sandbox_url}/_sandbox/wallet", json={"balance": 0})
    broke = httpx.post(f"{url}/api/transfers", json={**GOOD, "reference": "PAY-3"}, headers=AUTH)
    record = httpx.get(f"{url}/api/transfers/PAY-3", headers=AUTH).json()
    missing = httpx.get(f"{url}/api/transfers/PAY-2", headers=AUTH)
    assert enquiry.status_code == 422 and enquiry.json()["error"] == "enquiry_failed"
    assert missing.status_code == 404
    assert broke.status_code == 422 and "Insufficient funds" in broke.json()["message"]
    assert record["status"] == "failed" and record["initiation"] == "rejected"
    assert record["next_check_at"] is None


def test_malformed_payout_requests_are_422(stack: tuple[str, str]) -> None:
    """Missing fields, float amounts and bad account numbers are refused before any call."""
    url, _ = stack
    missing = httpx.post(f"{url}/api/transfers", json={"amount": 1}, headers=AUTH)
    floaty = httpx.post(
        f"{url}/api/transfers", json={**GOOD, "amount": 1.5, "reference": "X"}, headers=AUTH
    )
    short = httpx.post(
        f"{url}/api/transfers",
        headers=AUTH,
        json={**GOOD, "account_number": "123", "reference": "Y"},
    )
    assert (missing.status_code, floaty.status_code, short.status_code) == (422, 422, 422)


def test_hostile_payout_references_are_refused_not_500(stack: tuple[str, str]) -> None:
    """A lone surrogate is 400 (it was a 500: the error echoed it back and could not be
    encoded); NUL and an overlong reference are 422; nothing reaches the sandbox."""
    url, sandbox_url = stack

    def post(reference: str) -> httpx.Response:
        content = json.dumps({**GOOD, "reference": reference}).encode()
        headers = {**AUTH, "content-type": "application/json"}
        return httpx.post(f"{url}/api/transfers", content=content, headers=headers)

    surrogate, nul, long = post("\ud800"), post("OK\u0000"), post("R" * 5000)
    sent = httpx.get(f"{sandbox_url}/_sandbox/transfers").json()["transfers"]
    assert (surrogate.status_code, surrogate.json()["error"]) == (400, "malformed_json")
    assert (nul.status_code, long.status_code) == (422, 422)
    assert sent == []


def test_payouts_answer_503_without_provider_settings(receiver_url: str) -> None:
    """A receiver started without provider settings refuses payouts clearly."""
    body = {**GOOD, "reference": "Z"}
    response = httpx.post(f"{receiver_url}/api/transfers", json=body, headers=AUTH)
    assert response.status_code == 503
    assert "PAYRECON_PROVIDER_BASE_URL" in response.json()["message"]


def _refused(url: str, sandbox_url: str, reference: str) -> tuple[httpx.Response, dict[str, Any]]:
    answer = httpx.post(f"{url}/api/transfers", json={**GOOD, "reference": reference}, headers=AUTH)
    record = httpx.get(f"{url}/api/transfers/{reference}", headers=AUTH)
    assert httpx.get(f"{sandbox_url}/_sandbox/transfers").json()["transfers"] == []
    return answer, (record.json() if record.status_code == 200 else {})


def test_an_empty_ip_whitelist_is_the_providers_403_with_its_message(
    stack: tuple[str, str],
) -> None:
    """With whitelisting on and no entries the provider answers 403; so does the API, quoting
    the provider's message and saying what to do (it was 422)."""
    url, sandbox_url = stack
    httpx.post(f"{sandbox_url}/_sandbox/whitelist", json={"enabled": True}).raise_for_status()
    answer, record = _refused(url, sandbox_url, "WL-1")
    message = answer.json()["message"]
    assert (answer.status_code, answer.json()["error"]) == (403, "rejected"), answer.text
    assert "Access denied. IP whitelisting is enabled but no IP addresses are configured" in message
    assert "IP whitelist in the provider's dashboard" in message
    assert (record["status"], record["initiation"]) == ("failed", "rejected")


def test_an_address_off_the_whitelist_is_403_with_the_providers_message(
    database_url: str, engine: Engine
) -> None:
    """With whitelisting on and only another address listed, the API answers 403 with the
    provider's "not allowed" message."""
    with payout_stack(database_url, engine, otp="246810") as (url, sandbox_url):
        entry = {"ip": "192.0.2.10", "description": "office", "otp": "246810"}
        httpx.post(f"{sandbox_url}/_sandbox/whitelist/entries", json=entry).raise_for_status()
        httpx.post(f"{sandbox_url}/_sandbox/whitelist", json={"enabled": True}).raise_for_status()
        answer, _ = _refused(url, sandbox_url, "WL-2")
    assert answer.status_code == 403, answer.text
    assert "Access denied. Your IP address is not allowed" in answer.json()["message"]


def test_a_refused_secret_key_is_502_naming_the_setting(database_url: str, engine: Engine) -> None:
    """The provider's 401 to our key is not the caller's fault: 502, naming
    PAYRECON_PROVIDER_SECRET_KEY, and nothing is paid."""
    wrong = "sk_test_" + "wrongkey0123456789"
    with payout_stack(database_url, engine, secret_key=wrong) as (url, sandbox_url):
        answer, _ = _refused(url, sandbox_url, "KEY-1")
    assert (answer.status_code, answer.json()["error"]) == (502, "auth"), answer.text
    assert "PAYRECON_PROVIDER_SECRET_KEY" in answer.json()["message"]


def test_webhook_not_configured_says_how_to_fix_it(database_url: str, engine: Engine) -> None:
    """ "Webhook not configured" tells the merchant to set the webhook URL in the provider's
    dashboard, and how on the sandbox."""
    with payout_stack(database_url, engine, webhook_url=None) as (url, sandbox_url):
        answer, record = _refused(url, sandbox_url, "WH-1")
    message = answer.json()["message"]
    assert answer.status_code == 422, answer.text
    assert "Webhook not configured" in message and "nothing was paid" in message
    assert "set the webhook URL" in message and "provider's dashboard" in message
    assert "--webhook-url" in message and "/_sandbox/webhook-url" in message
    assert record["failure_reason"] == "Webhook not configured"
