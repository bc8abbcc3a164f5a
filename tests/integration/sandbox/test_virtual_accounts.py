"""Conformance: virtual accounts (endpoints 1-4)."""

from __future__ import annotations

import pytest

from sandbox.nuban import is_valid_nuban

CUSTOMER = {"first_name": "Ada", "last_name": "Obi", "email": "ada@example.com"}


def _create(client, **body):
    return client.post(
        "/v1/virtual-accounts", json={"type": "static", "customer": CUSTOMER, **body}
    )


def test_create_answers_201_with_the_record(sandbox):
    """Creating a static account answers 201 with an active record and a valid NUBAN."""
    with sandbox.client() as client:
        response = _create(client, meta={"order": 7})
    record = response.json()["data"]
    assert response.status_code == 201
    assert set(record) == {
        "uid", "type", "status", "account_number", "account_name", "bank_name",
        "customer", "expected_amount", "meta", "created_at",
    }  # fmt: skip
    assert (record["type"], record["status"], record["meta"]) == ("static", "active", {"order": 7})
    assert record["customer"] == CUSTOMER
    assert is_valid_nuban("035", record["account_number"])


@pytest.mark.parametrize(
    "body",
    [
        {"type": "floating", "customer": CUSTOMER},
        {"type": "static"},
        {"type": "static", "customer": "Ada"},
        {"type": "static", "customer": {"first_name": 5}},
        {"type": "static", "customer": CUSTOMER, "expected_amount": -1},
        {"type": "static", "customer": CUSTOMER, "expected_amount": 1.5},
        {"type": "static", "customer": CUSTOMER, "meta": []},
        {"type": "dynamic", "customer": CUSTOMER},
        {"customer": CUSTOMER},
    ],
)
def test_create_validation_error_is_422(shared_sandbox, body):
    """A body breaking the create rules answers 422 Validation failed."""
    with shared_sandbox.client() as client:
        response = client.post("/v1/virtual-accounts", json=body)
    assert response.status_code == 422
    assert response.json()["message"] == "Validation failed"


def test_dynamic_account_with_expected_amount_is_created(sandbox):
    """A dynamic account with expected_amount is created and keeps the amount."""
    with sandbox.client() as client:
        response = _create(client, type="dynamic", expected_amount=150_000)
    assert response.status_code == 201
    assert response.json()["data"]["expected_amount"] == 150_000


def test_list_filters_and_paginates(sandbox):
    """The list filters by type and status and pages with meta {page, per_page, total}."""
    with sandbox.client() as client:
        uids = [_create(client).json()["data"]["uid"] for _ in range(5)]
        _create(client, type="dynamic", expected_amount=1)
        client.post(f"/v1/virtual-accounts/{uids[0]}/deactivate")
        page2 = client.get(
            "/v1/virtual-accounts", params={"type": "static", "per_page": 2, "page": 2}
        )
        inactive = client.get("/v1/virtual-accounts", params={"status": "inactive"})
        everything = client.get("/v1/virtual-accounts")
        beyond = client.get("/v1/virtual-accounts", params={"page": 9})
    assert page2.json()["meta"] == {"page": 2, "per_page": 2, "total": 5}
    assert [a["uid"] for a in page2.json()["data"]] == uids[2:4]
    assert [a["uid"] for a in inactive.json()["data"]] == [uids[0]]
    assert everything.json()["meta"] == {"page": 1, "per_page": 20, "total": 6}
    assert beyond.json()["data"] == []


@pytest.mark.parametrize(
    "params", [{"type": "x"}, {"status": "gone"}, {"page": "0"}, {"per_page": "101"}, {"page": "a"}]
)
def test_list_bad_query_is_422(shared_sandbox, params):
    """Unknown filter values or out-of-range pages answer 422."""
    with shared_sandbox.client() as client:
        assert client.get("/v1/virtual-accounts", params=params).status_code == 422


def test_get_deactivate_and_not_found(sandbox):
    """Get by uid; deactivate makes it inactive (again: still 200); unknown uid is 404."""
    with sandbox.client() as client:
        uid = _create(client).json()["data"]["uid"]
        fetched = client.get(f"/v1/virtual-accounts/{uid}")
        first = client.post(f"/v1/virtual-accounts/{uid}/deactivate")
        second = client.post(f"/v1/virtual-accounts/{uid}/deactivate")
        missing = client.get("/v1/virtual-accounts/va_missing")
        missing_deactivate = client.post("/v1/virtual-accounts/va_missing/deactivate")
    assert fetched.json()["data"]["uid"] == uid
    assert first.status_code == 200
    assert first.json()["data"]["status"] == "inactive"
    assert second.status_code == 200
    assert missing.status_code == 404
    assert missing.json() == {"status": "failed", "message": "Virtual account not found"}
    assert missing_deactivate.status_code == 404
