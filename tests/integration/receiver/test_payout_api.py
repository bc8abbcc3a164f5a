"""`POST /api/transfers` pays out through a real sandbox, and refusals never look pending."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import Engine

from payrecon.settings import load_settings
from provider.client import ProviderClient
from receiver.app import create_app
from sandbox.app import create_app as create_sandbox
from sandbox.config import SandboxConfig
from tests.integration.receiver.conftest import ADMIN
from tests.support.servers import running_server

AUTH = {"authorization": f"Bearer {ADMIN}"}
GOOD = {"amount": 250_000, "bank_code": "044", "account_number": "0440000017"}


@pytest.fixture
def stack(database_url: str, engine: Engine) -> Iterator[tuple[str, str]]:
    """A sandbox and a receiver wired to it; yields (receiver URL, sandbox URL)."""
    config = SandboxConfig(complete_after=None, seed=3, webhook_url="http://127.0.0.1:9/webhook")
    with running_server(create_sandbox(config)) as sandbox_url:
        settings = load_settings(database_url=database_url, admin_token=ADMIN)
        app = create_app(
            settings,
            engine=engine,
            payout_client_factory=lambda: ProviderClient(sandbox_url, config.secret_key),
        )
        with running_server(app) as url:
            yield url, sandbox_url


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


def test_payouts_answer_503_without_provider_settings(database_url: str, engine: Engine) -> None:
    """A receiver started without provider settings refuses payouts clearly."""
    settings = load_settings(database_url=database_url, admin_token=ADMIN)
    with running_server(create_app(settings, engine=engine)) as url:
        response = httpx.post(f"{url}/api/transfers", json={**GOOD, "reference": "Z"}, headers=AUTH)
    assert response.status_code == 503
    assert "PAYRECON_PROVIDER_BASE_URL" in response.json()["message"]
