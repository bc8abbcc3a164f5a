"""`/api/collections`: create through a real sandbox, register, read and list; bad input is
a clear 4xx, never a 500."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.apps import ADMIN

AUTH = {"authorization": f"Bearer {ADMIN}"}


def test_create_is_201_with_the_account_then_200_when_repeated(stack: tuple[str, str]) -> None:
    """The first request creates the account at the provider; the same repeat creates none."""
    url, _ = stack
    body = {"amount": 750_000, "reference": "COL-A", "customer_name": "Ada Obi"}
    first = httpx.post(f"{url}/api/collections", json=body, headers=AUTH)
    again = httpx.post(f"{url}/api/collections", json=body, headers=AUTH)
    assert first.status_code == 201, first.text
    record = first.json()
    assert record["status"] == "pending" and record["confirmed"] is False
    assert record["amount"] == 750_000 and record["fee"] == 7_500
    assert len(record["account_number"]) == 10 and record["bank_name"]
    assert record["expires_at"] is not None and record["initiation"] == "accepted"
    assert again.status_code == 200 and again.json()["account_number"] == record["account_number"]


def test_a_different_collection_under_a_used_reference_is_409(stack: tuple[str, str]) -> None:
    """Reusing a reference for another amount is refused and changes nothing."""
    url, _ = stack
    httpx.post(f"{url}/api/collections", json={"amount": 100, "reference": "COL-B"}, headers=AUTH)
    clash = httpx.post(
        f"{url}/api/collections", json={"amount": 200, "reference": "COL-B"}, headers=AUTH
    )
    stored = httpx.get(f"{url}/api/collections/COL-B", headers=AUTH).json()
    assert clash.status_code == 409 and clash.json()["error"] == "duplicate"
    assert stored["amount"] == 100


def test_either_reference_finds_the_collection_and_unknown_is_404(stack: tuple[str, str]) -> None:
    """The merchant's reference reads the record; an unknown or hostile one is 404."""
    url, _ = stack
    httpx.post(f"{url}/api/collections", json={"amount": 100, "reference": "COL-C"}, headers=AUTH)
    found = httpx.get(f"{url}/api/collections/COL-C", headers=AUTH)
    unknown = httpx.get(f"{url}/api/collections/NOPE", headers=AUTH)
    hostile = httpx.get(f"{url}/api/collections/%00x", headers=AUTH)
    long = httpx.get(f"{url}/api/collections/{'x' * 5000}", headers=AUTH)
    assert found.status_code == 200 and found.json()["reference"] == "COL-C"
    assert (unknown.status_code, hostile.status_code, long.status_code) == (404, 404, 404)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"amount": 100}, "reference"),
        ({"reference": "X"}, "amount"),
        ({"amount": "100", "reference": "X"}, "amount"),
        ({"amount": "١٠٠", "reference": "X"}, "amount"),
        ({"amount": 10.5, "reference": "X"}, "amount"),
        ({"amount": True, "reference": "X"}, "amount"),
        ({"amount": 0, "reference": "X"}, "amount"),
        ({"amount": 2**64, "reference": "X"}, "amount"),
        ({"amount": 100, "reference": ""}, "reference"),
        ({"amount": 100, "reference": "R" * 101}, "reference"),
        ({"amount": 100, "reference": "A\u0000B"}, "reference"),
        ({"amount": 100, "reference": ["X"]}, "reference"),
        ({"amount": 100, "reference": "X", "currency": "USD"}, "currency"),
        ({"amount": 100, "reference": "X", "customer_email": "nope"}, "customer_email"),
        ({"amount": 100, "reference": "X", "customer_name": {"a": 1}}, "customer_name"),
        ({"amount": 100, "reference": "X", "surprise": 1}, "surprise"),
    ],
)
def test_malformed_create_bodies_are_422_naming_the_field(
    stack: tuple[str, str], body: dict[str, Any], field: str
) -> None:
    """Each malformed body is refused before the provider is called, naming its field."""
    url, _ = stack
    answer = httpx.post(f"{url}/api/collections", json=body, headers=AUTH)
    listed = httpx.get(f"{url}/api/collections", headers=AUTH).json()
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert listed["items"] == []


def test_non_json_and_oversized_bodies_are_clear_errors(stack: tuple[str, str]) -> None:
    """Not JSON is 400, not application/json 415, a huge body 413, a lone surrogate 400."""
    url, _ = stack
    post = f"{url}/api/collections"
    garbage = httpx.post(post, content=b"{", headers={**AUTH, "content-type": "application/json"})
    plain = httpx.post(post, content=b"amount=1", headers={**AUTH, "content-type": "text/plain"})
    huge = httpx.post(
        post,
        content=b'{"reference": "' + b"x" * 200_000 + b'", "amount": 1}',
        headers={**AUTH, "content-type": "application/json"},
    )
    surrogate = httpx.post(
        post,
        content=b'{"reference": "\\ud800", "amount": 1}',
        headers={**AUTH, "content-type": "application/json"},
    )
    assert (garbage.status_code, plain.status_code) == (400, 415)
    assert (huge.status_code, surrogate.status_code) == (413, 400)


def test_an_odd_phone_is_created_with_a_warning(stack: tuple[str, str]) -> None:
    """A phone number of an odd shape does not stop the collection; the answer warns."""
    url, _ = stack
    answer = httpx.post(
        f"{url}/api/collections",
        json={"amount": 100, "reference": "COL-P", "customer_phone": "ring me"},
        headers=AUTH,
    )
    assert answer.status_code == 201
    assert "ring me" in answer.json()["warnings"][0]


def test_expected_is_201_then_200_identical_then_409_different(stack: tuple[str, str]) -> None:
    """Registering follows the transfers' rules: new, identical repeat, different."""
    url, _ = stack
    body = {"reference": "EXT-1", "amount": 5_000, "expires_at": "2026-12-01T10:00:00Z"}
    first = httpx.post(f"{url}/api/collections/expected", json=body, headers=AUTH)
    same = httpx.post(f"{url}/api/collections/expected", json=body, headers=AUTH)
    other = httpx.post(
        f"{url}/api/collections/expected", json={**body, "amount": 6_000}, headers=AUTH
    )
    bad_date = httpx.post(
        f"{url}/api/collections/expected", json={**body, "expires_at": "tomorrow"}, headers=AUTH
    )
    far = httpx.post(
        f"{url}/api/collections/expected",
        json={**body, "expires_at": "0001-01-01T00:00+14:00"},
        headers=AUTH,
    )
    assert (first.status_code, same.status_code, other.status_code) == (201, 200, 409)
    assert first.json()["expires_at"] == "2026-12-01T10:00:00Z"
    assert first.json()["origin"] == "expected"
    assert (bad_date.status_code, far.status_code) == (422, 422)


def test_lists_page_by_cursor_and_filter(stack: tuple[str, str]) -> None:
    """Lists are newest first in pages; a transfer cursor or a bad filter is 400."""
    url, _ = stack
    for number in range(5):
        httpx.post(
            f"{url}/api/collections/expected",
            json={"reference": f"L-{number}", "amount": 100 + number},
            headers=AUTH,
        )
    first = httpx.get(f"{url}/api/collections?limit=3", headers=AUTH).json()
    second = httpx.get(
        f"{url}/api/collections?limit=3&cursor={first['next_cursor']}", headers=AUTH
    ).json()
    pending = httpx.get(f"{url}/api/collections?status=pending&limit=500", headers=AUTH).json()
    bad = [
        httpx.get(f"{url}/api/collections?{query}", headers=AUTH).status_code
        for query in ("status=paid", "limit=0", "limit=²", "cursor=dDox", "since=2026-13-01")
    ]
    assert [item["reference"] for item in first["items"]] == ["L-4", "L-3", "L-2"]
    assert [item["reference"] for item in second["items"]] == ["L-1", "L-0"]
    assert second["next_cursor"] is None
    assert len(pending["items"]) == 5
    assert bad == [400, 400, 400, 400, 400]


def test_collections_need_the_admin_token(stack: tuple[str, str]) -> None:
    """Without the token every collection route answers 401 or 403."""
    url, _ = stack
    answers = [
        httpx.get(f"{url}/api/collections").status_code,
        httpx.post(f"{url}/api/collections", json={"amount": 1, "reference": "Z"}).status_code,
    ]
    assert all(status in (401, 403) for status in answers)
