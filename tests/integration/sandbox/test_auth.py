"""Conformance: Authentication (spec) — every 401 cause, and the public key's reach."""

from __future__ import annotations

import pytest

from tests.integration.sandbox.conftest import GOOD_ACCOUNT, transfer_body

UNAUTHENTICATED = {"status": "failed", "message": "Unauthenticated"}


def test_missing_authorization_header_is_401(shared_sandbox):
    """A request without Authorization gets 401 Unauthenticated."""
    with shared_sandbox.client(key=None) as client:
        response = client.get("/v1/banks")
    assert response.status_code == 401
    assert response.json() == UNAUTHENTICATED


def test_header_without_bearer_prefix_is_401(shared_sandbox):
    """The right key without the `Bearer ` prefix is refused."""
    with shared_sandbox.client(
        key=None, headers={"Authorization": shared_sandbox.config.secret_key}
    ) as client:
        response = client.get("/v1/banks")
    assert response.status_code == 401
    assert response.json() == UNAUTHENTICATED


def test_unknown_key_is_401(shared_sandbox):
    """A key the shared_sandbox never issued is refused."""
    with shared_sandbox.client("sk_test_0000000000000000") as client:
        response = client.get("/v1/transaction/anything")
    assert response.status_code == 401
    assert response.json() == UNAUTHENTICATED


def test_other_environments_key_is_401(shared_sandbox):
    """A live key against the shared_sandbox environment fails authentication."""
    assert shared_sandbox.config.other_secret_key.startswith("sk_live_")
    with shared_sandbox.client(shared_sandbox.config.other_secret_key) as client:
        response = client.get("/v1/banks")
    assert response.status_code == 401
    assert response.json() == UNAUTHENTICATED


def test_sandbox_key_against_production_is_401(start_sandbox):
    """A production sandbox accepts live keys and refuses sandbox (test) keys."""
    production = start_sandbox(environment="production")
    assert production.config.secret_key.startswith("sk_live_")
    with production.client(production.config.other_secret_key) as client:
        refused = client.get("/v1/banks")
    with production.client() as client:
        accepted = client.get("/v1/banks")
    assert refused.status_code == 401
    assert accepted.status_code == 200


def test_expired_key_is_401(start_sandbox):
    """A regenerated (expired) key is refused."""
    box = start_sandbox(expired_keys=("sk_test_expired00000000",))
    with box.client("sk_test_expired00000000") as client:
        response = client.get("/v1/banks")
    assert response.status_code == 401
    assert response.json() == UNAUTHENTICATED


def test_public_key_may_list_banks_and_enquire(shared_sandbox):
    """The public key opens GET /v1/banks and GET /v1/account-enquiry."""
    bank, number = GOOD_ACCOUNT
    with shared_sandbox.client("public") as client:
        banks = client.get("/v1/banks")
        enquiry = client.get(
            "/v1/account-enquiry", params={"account_number": number, "bank_code": bank}
        )
    assert banks.status_code == 200
    assert enquiry.status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/transfer/initiate", transfer_body("pk-1")),
        ("GET", "/v1/transaction/pk-1", None),
        ("GET", "/v1/collection/pk-1", None),
        (
            "POST",
            "/v1/collection/bank-transfer",
            {"currency": "NGN", "reference": "c", "amount": 1},
        ),
        ("POST", "/v1/virtual-accounts", {"type": "static", "customer": {}}),
        ("GET", "/v1/virtual-accounts", None),
        ("GET", "/v1/virtual-accounts/va_x", None),
        ("POST", "/v1/virtual-accounts/va_x/deactivate", None),
    ],
)
def test_public_key_on_secret_endpoint_is_401(shared_sandbox, method, path, body):
    """The public key on any secret-key endpoint gets the same 401 as an unknown key."""
    with shared_sandbox.client("public") as client:
        response = client.request(method, path, json=body)
    assert response.status_code == 401
    assert response.json() == UNAUTHENTICATED
    assert shared_sandbox.world.transfers() == []
