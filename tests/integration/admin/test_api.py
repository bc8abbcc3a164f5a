"""The admin API: token rules, transfer lookup, listing with cursors, expected transfers."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import Engine, func, select

from ledger.db import read_session
from ledger.models import Transfer
from tests.support.apps import ADMIN, StartReceiver
from tests.support.webhooks import encode, success_body

AUTH = {"authorization": f"Bearer {ADMIN}"}
JSON = {"content-type": "application/json"}


def _count(engine: Engine, model: type) -> int:
    with read_session(engine) as session:
        return int(session.execute(select(func.count()).select_from(model)).scalar_one())


def test_admin_routes_are_403_without_a_configured_token(start_receiver: StartReceiver) -> None:
    """No PAYRECON_ADMIN_TOKEN means the admin API is closed."""
    with start_receiver() as url:
        response = httpx.get(f"{url}/api/transfers", headers=AUTH)
    assert response.status_code == 403


def test_a_wrong_token_is_401_and_basic_auth_works(receiver_url: str) -> None:
    """The token is checked in constant time; Basic with the token as password is accepted."""
    wrong = httpx.get(f"{receiver_url}/api/transfers", headers={"authorization": "Bearer nope"})
    basic = httpx.get(f"{receiver_url}/api/transfers", auth=("finance", ADMIN))
    assert wrong.status_code == 401 and "Basic" in wrong.headers["www-authenticate"]
    assert basic.status_code == 200


def test_expected_transfers_are_201_then_200_then_409(receiver_url: str) -> None:
    """Registering is idempotent for identical content and refuses a different one."""
    body = {"reference": "INV-1", "amount": 250_000, "fee": 2500}
    first = httpx.post(f"{receiver_url}/api/transfers/expected", json=body, headers=AUTH)
    same = httpx.post(f"{receiver_url}/api/transfers/expected", json=body, headers=AUTH)
    different = httpx.post(
        f"{receiver_url}/api/transfers/expected", json={**body, "amount": 1}, headers=AUTH
    )
    assert (first.status_code, same.status_code, different.status_code) == (201, 200, 409)
    assert first.json()["amount"] == 250_000 and first.json()["status"] == "pending"


def test_bad_registrations_are_clear_errors(receiver_url: str) -> None:
    """Wrong types are 422 naming the field; non-JSON is 400; wrong media type 415."""
    url = f"{receiver_url}/api/transfers/expected"
    typed = httpx.post(url, json={"reference": "X", "amount": 1.5}, headers=AUTH)
    negative = httpx.post(url, json={"reference": "X", "amount": -1}, headers=AUTH)
    not_json = httpx.post(url, content=b"{", headers={**AUTH, "content-type": "application/json"})
    media = httpx.post(url, content=b"{}", headers={**AUTH, "content-type": "text/plain"})
    assert (typed.status_code, typed.json()["field"]) == (422, "amount")
    assert negative.status_code == 422
    assert (not_json.status_code, media.status_code) == (400, 415)


def test_registrations_with_unstorable_references_are_refused(
    receiver_url: str, engine: Engine
) -> None:
    """A lone surrogate escape is 400 and a control character in either reference 422 naming
    the field; nothing is stored (a surrogate was a 500 before)."""
    url = f"{receiver_url}/api/transfers/expected"

    def post(body: dict[str, object]) -> httpx.Response:
        content = json.dumps(body).encode()  # escaped: the surrogate survives JSON decoding
        return httpx.post(url, content=content, headers={**AUTH, **JSON})

    surrogates = [
        post({"reference": "\ud800", "amount": 1}),
        post({"reference": "OK-1", "provider_reference": "a\udfffb", "amount": 1}),
    ]
    controls = [
        (post({"reference": "NUL\u0000", "amount": 1}), "reference"),
        (
            post({"reference": "OK-2", "provider_reference": "T\tX", "amount": 1}),
            "provider_reference",
        ),
    ]
    for answer in surrogates:
        assert (answer.status_code, answer.json()["error"]) == (400, "malformed_json")
    for answer, field in controls:
        assert (answer.status_code, answer.json()["field"]) == (422, field)
    assert _count(engine, Transfer) == 0


def test_a_registration_after_the_webhook_resolves_the_orphan(receiver_url: str) -> None:
    """A webhook that arrived first is an orphan until the transfer is registered."""
    httpx.post(
        f"{receiver_url}/webhook",
        content=encode(success_body("TRF9", merchant_reference="INV-9")),
        headers={"content-type": "application/json"},
    )
    registered = httpx.post(
        f"{receiver_url}/api/transfers/expected",
        json={"reference": "INV-9", "amount": 100_000},
        headers=AUTH,
    )
    finding = next(f for f in registered.json()["findings"] if f["kind"] == "orphan_event")
    assert registered.status_code == 200
    assert finding["resolved_at"] is not None
    assert registered.json()["origin"] == "expected"


def test_a_transfer_is_found_by_either_reference(receiver_url: str) -> None:
    """GET /api/transfers/{reference} accepts the merchant's or the provider's reference."""
    httpx.post(
        f"{receiver_url}/api/transfers/expected",
        json={"reference": "INV-2", "amount": 5, "provider_reference": "TRF_2"},
        headers=AUTH,
    )
    by_ours = httpx.get(f"{receiver_url}/api/transfers/INV-2", headers=AUTH)
    by_theirs = httpx.get(f"{receiver_url}/api/transfers/TRF_2", headers=AUTH)
    missing = httpx.get(f"{receiver_url}/api/transfers/NOPE", headers=AUTH)
    assert by_ours.json() == by_theirs.json()
    assert missing.status_code == 404


def test_listing_pages_with_a_cursor_and_filters(receiver_url: str, engine: Engine) -> None:
    """Cursor pages cover every transfer once; status and finding filters narrow the list, and
    an unknown cursor, status or finding kind is 400."""
    for i in range(7):
        httpx.post(
            f"{receiver_url}/api/transfers/expected",
            json={"reference": f"L{i}", "amount": 100},
            headers=AUTH,
        )
    httpx.post(
        f"{receiver_url}/webhook",
        content=encode(success_body("ORPH")),
        headers={"content-type": "application/json"},
    )
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        params = {"limit": "3", **({"cursor": cursor} if cursor else {})}
        page = httpx.get(f"{receiver_url}/api/transfers", params=params, headers=AUTH).json()
        seen += [item["reference"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    orphans = httpx.get(
        f"{receiver_url}/api/transfers", params={"finding": "orphan_event"}, headers=AUTH
    ).json()["items"]
    flagged = httpx.get(
        f"{receiver_url}/api/transfers", params={"finding": "any"}, headers=AUTH
    ).json()["items"]
    successful = httpx.get(
        f"{receiver_url}/api/transfers", params={"status": "successful"}, headers=AUTH
    ).json()["items"]
    bad = httpx.get(f"{receiver_url}/api/transfers", params={"cursor": "garbage"}, headers=AUTH)
    bad_status = httpx.get(f"{receiver_url}/api/transfers", params={"status": "x"}, headers=AUTH)
    bad_kind = httpx.get(f"{receiver_url}/api/transfers", params={"finding": "\x00"}, headers=AUTH)
    assert sorted(seen) == sorted([f"L{i}" for i in range(7)] + ["m-ORPH"])
    assert [t["reference"] for t in orphans] == ["m-ORPH"]
    assert [t["reference"] for t in flagged] == ["m-ORPH"]
    assert [t["reference"] for t in successful] == ["m-ORPH"]
    assert (bad.status_code, bad_status.status_code, bad_kind.status_code) == (400, 400, 400)
    assert bad_kind.json()["error"] == "invalid_query"
