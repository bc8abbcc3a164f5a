"""The relay's admin API on a real server: endpoints, events with their deliveries and
attempts, retries; bad input is a 4xx JSON error, never a 500."""

from __future__ import annotations

import base64
import datetime as dt
import time

import httpx
import pytest
from sqlalchemy import Engine, select
from standardwebhooks.webhooks import Webhook

from ledger.db import read_session
from ledger.events.types import RelayEventType
from ledger.models import RelayEndpoint
from ledger.queries import encode_cursor
from relay.endpoints import signing_secrets
from relay.keys import SecretBox
from relay.signing import headers
from tests.integration.relay.conftest import (
    ADMIN,
    AUTH,
    RELAY_KEYS,
    add_transfer,
    emit,
    record_attempt,
)
from tests.support.apps import StartReceiver

HOOK = "http://10.0.0.7:8080/payrecon"


def _add(url: str, **body: object) -> httpx.Response:
    return httpx.post(f"{url}/api/endpoints", json={"url": HOOK, **body}, headers=AUTH)


def test_an_endpoint_is_added_with_its_secret_shown_once(relay_url: str, engine: Engine) -> None:
    """POST is 201 with a whsec_ secret; later reads never show it, and the ledger holds it
    sealed under PAYRECON_RELAY_KEYS."""
    created = _add(relay_url, events=["transfer.confirmed"], description="orders")
    assert created.status_code == 201
    record = created.json()
    secret = record["secret"]
    assert secret.startswith("whsec_")
    assert (record["url"], record["events"], record["enabled"]) == (
        HOOK,
        ["transfer.confirmed"],
        True,
    )
    listed = httpx.get(f"{relay_url}/api/endpoints", headers=AUTH)
    one = httpx.get(f"{relay_url}/api/endpoints/{record['id']}", headers=AUTH)
    assert [item["id"] for item in listed.json()["items"]] == [record["id"]]
    assert one.json()["description"] == "orders" and one.json()["pending"] == 0
    assert secret not in listed.text and secret not in one.text
    with read_session(engine) as session:
        row = session.execute(select(RelayEndpoint)).scalar_one()
    assert secret.removeprefix("whsec_") not in row.secret_sealed
    assert signing_secrets(row, SecretBox([RELAY_KEYS]), now=dt.datetime.now(dt.UTC)) == [secret]


def test_without_events_an_endpoint_takes_the_default_set(relay_url: str) -> None:
    """No `events` (or null) is every type but transfer.reported."""
    expected = sorted(set(RelayEventType) - {RelayEventType.TRANSFER_REPORTED})
    assert _add(relay_url).json()["events"] == expected
    assert _add(relay_url, events=None).json()["events"] == expected


def test_patch_changes_what_it_names_and_leaves_the_rest(relay_url: str) -> None:
    """url, events, description and enabled change one by one; a disabled endpoint says why."""
    endpoint = _add(relay_url, description="orders").json()
    url = f"{relay_url}/api/endpoints/{endpoint['id']}"
    moved = httpx.patch(url, json={"url": "https://orders.example/hook"}, headers=AUTH)
    assert moved.status_code == 200
    assert (moved.json()["url"], moved.json()["description"]) == (
        "https://orders.example/hook",
        "orders",
    )
    typed = httpx.patch(url, json={"events": ["transfer.reported"]}, headers=AUTH).json()
    assert typed["events"] == ["transfer.reported"]
    cleared = httpx.patch(url, json={"description": None}, headers=AUTH).json()
    assert cleared["description"] is None and cleared["events"] == ["transfer.reported"]
    off = httpx.patch(url, json={"enabled": False}, headers=AUTH).json()
    assert (off["enabled"], off["disabled_reason"]) == (False, "disabled by an operator")
    on = httpx.patch(url, json={"enabled": True}, headers=AUTH).json()
    assert (on["enabled"], on["disabled_reason"]) == (True, None)


def test_rotating_a_secret_signs_with_both_for_a_day(relay_url: str, engine: Engine) -> None:
    """rotate-secret answers a new secret; the ledger signs with new and old, and a consumer
    holding either verifies (standardwebhooks)."""
    endpoint = _add(relay_url).json()
    rotated = httpx.post(f"{relay_url}/api/endpoints/{endpoint['id']}/rotate-secret", headers=AUTH)
    assert rotated.status_code == 200
    new, old = rotated.json()["secret"], endpoint["secret"]
    assert new.startswith("whsec_") and new != old
    until = dt.datetime.fromisoformat(rotated.json()["previous_secret_until"])
    assert dt.timedelta(hours=23) < until - dt.datetime.now(dt.UTC) <= dt.timedelta(hours=24)
    with read_session(engine) as session:
        row = session.execute(select(RelayEndpoint)).scalar_one()
    box = SecretBox([RELAY_KEYS])
    now = dt.datetime.now(dt.UTC)
    assert signing_secrets(row, box, now=now) == [new, old]
    assert signing_secrets(row, box, now=now + dt.timedelta(hours=25)) == [new]
    body = '{"id":"evt_x"}'
    sent = headers(signing_secrets(row, box, now=now), "evt_x", int(time.time()), body)
    assert Webhook(old).verify(body, sent) == Webhook(new).verify(body, sent) == {"id": "evt_x"}


def test_delete_removes_the_endpoint_but_keeps_its_history(relay_url: str, engine: Engine) -> None:
    """DELETE answers the removed endpoint; it is gone from reads, its deliveries stay."""
    endpoint = _add(relay_url).json()
    seeded = emit(engine, add_transfer(engine, "T-DEL"), "T-DEL")
    url = f"{relay_url}/api/endpoints/{endpoint['id']}"
    removed = httpx.delete(url, headers=AUTH)
    assert removed.status_code == 200 and removed.json()["removed_at"] is not None
    assert httpx.get(url, headers=AUTH).status_code == 404
    assert httpx.delete(url, headers=AUTH).status_code == 404
    assert httpx.get(f"{relay_url}/api/endpoints", headers=AUTH).json()["items"] == []
    event = httpx.get(f"{relay_url}/api/events/{seeded.event_id}", headers=AUTH).json()
    assert [d["endpoint_id"] for d in event["deliveries"]] == [endpoint["id"]]


BAD_BODIES = [
    ({"url": 5}, "url"),
    ({"url": None}, "url"),
    ({}, "url"),
    ({"url": "ftp://example.com/"}, "url"),
    ({"url": "http://user:pw@example.com/"}, "url"),
    ({"url": "http://example.com/" + "x" * 2000}, "url"),
    ({"url": HOOK, "events": "transfer.confirmed"}, "events"),
    ({"url": HOOK, "events": []}, "events"),
    ({"url": HOOK, "events": ["transfer.paid"]}, "events"),
    ({"url": HOOK, "events": [1]}, "events"),
    ({"url": HOOK, "description": 7}, "description"),
    ({"url": HOOK, "description": "x" * 501}, "description"),
    ({"url": HOOK, "description": "a\u0000b"}, "description"),
    ({"url": HOOK, "enabled": False}, "enabled"),
    ({"url": HOOK, "secret": "whsec_mine"}, "secret"),
]


def test_bad_endpoint_bodies_are_422_naming_the_field(relay_url: str) -> None:
    """Wrong types, bad URLs, unknown or empty types, unknown fields: 422 with the field."""
    answers = [
        httpx.post(f"{relay_url}/api/endpoints", json=b, headers=AUTH) for b, _ in BAD_BODIES
    ]
    seen = [(a.status_code, a.json()["error"], a.json().get("field")) for a in answers]
    assert seen == [(422, "invalid", field) for _, field in BAD_BODIES]
    assert httpx.get(f"{relay_url}/api/endpoints", headers=AUTH).json()["items"] == []


def test_bad_patches_are_422_and_change_nothing(relay_url: str) -> None:
    """`enabled: "no"`, `url: null` and an unknown field are refused; the endpoint is as it was."""
    endpoint = _add(relay_url).json()
    url = f"{relay_url}/api/endpoints/{endpoint['id']}"
    for body, field in [({"enabled": "no"}, "enabled"), ({"url": None}, "url"), ({"on": 1}, "on")]:
        answer = httpx.patch(url, json=body, headers=AUTH)
        assert (answer.status_code, answer.json()["field"]) == (422, field)
    after = httpx.get(url, headers=AUTH).json()
    assert (after["url"], after["enabled"]) == (HOOK, True)


def test_malformed_and_oversized_bodies_are_4xx(relay_url: str) -> None:
    """Not JSON is 400, a JSON array 422, another media type 415, 64 KiB+ is 413."""
    url = f"{relay_url}/api/endpoints"
    json_type = {**AUTH, "content-type": "application/json"}
    broken = httpx.post(url, content=b'{"url": ', headers=json_type)
    array = httpx.post(url, content=b"[]", headers=json_type)
    text = httpx.post(url, content=b"{}", headers={**AUTH, "content-type": "text/plain"})
    big = httpx.post(url, content=b'{"url": "' + b"x" * 70_000 + b'"}', headers=json_type)
    surrogate = httpx.post(url, content=b'{"url": "\\ud800"}', headers=json_type)
    codes = [r.status_code for r in (broken, array, text, big, surrogate)]
    assert codes == [400, 422, 415, 413, 400]
    assert all(r.json()["status"] == "error" for r in (broken, array, text, big, surrogate))


@pytest.mark.parametrize("endpoint_id", ["999", "0", "abc", "-1", str(2**63), str(10**30), "١"])
def test_unknown_or_impossible_ids_are_404(relay_url: str, endpoint_id: str) -> None:
    """Every endpoint route answers 404 for an id no endpoint has or can have."""
    url = f"{relay_url}/api/endpoints/{endpoint_id}"
    answers = [
        httpx.get(url, headers=AUTH),
        httpx.patch(url, json={"enabled": False}, headers=AUTH),
        httpx.delete(url, headers=AUTH),
        httpx.post(f"{url}/rotate-secret", headers=AUTH),
        httpx.post(f"{relay_url}/api/deliveries/{endpoint_id}/retry", headers=AUTH),
    ]
    assert [(a.status_code, a.json()["error"]) for a in answers] == [(404, "not_found")] * 5


def test_the_relay_routes_need_the_admin_token(relay_url: str) -> None:
    """Without the token every relay route is 401."""
    answers = [
        httpx.get(f"{relay_url}/api/endpoints"),
        httpx.post(f"{relay_url}/api/endpoints", json={"url": HOOK}),
        httpx.get(f"{relay_url}/api/events"),
        httpx.post(f"{relay_url}/api/deliveries/1/retry"),
    ]
    assert [a.status_code for a in answers] == [401] * 4


def test_events_list_newest_first_with_filters_and_pages(relay_url: str, engine: Engine) -> None:
    """type, subject (kind or kind:reference), since and cursor filter; pages do not overlap."""
    _add(relay_url, events=["transfer.confirmed", "finding.opened"])
    first, second = add_transfer(engine, "T-1"), add_transfer(engine, "T-2")
    early = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    a = emit(engine, first, "T-1", now=early)
    b = emit(engine, first, "T-1", type=RelayEventType.FINDING_OPENED)
    c = emit(engine, second, "T-2")
    url = f"{relay_url}/api/events"

    def ids(**params: str) -> list[str]:
        answer = httpx.get(url, params=params, headers=AUTH)
        assert answer.status_code == 200, answer.text
        return [item["id"] for item in answer.json()["items"]]

    assert ids() == [c.event_id, b.event_id, a.event_id]
    assert ids(type="finding.opened") == [b.event_id]
    assert ids(subject="transfer:T-1") == [b.event_id, a.event_id]
    assert ids(subject="transfer") == [c.event_id, b.event_id, a.event_id]
    assert ids(subject="collection") == []
    assert ids(since="2025-06-01") == [c.event_id, b.event_id]
    page = httpx.get(url, params={"limit": "2"}, headers=AUTH).json()
    assert [i["id"] for i in page["items"]] == [c.event_id, b.event_id]
    assert ids(limit="2", cursor=page["next_cursor"]) == [a.event_id]
    last = httpx.get(url, params={"limit": "2", "cursor": page["next_cursor"]}, headers=AUTH)
    assert last.json()["next_cursor"] is None
    item = httpx.get(url, params={"subject": "transfer:T-2"}, headers=AUTH).json()["items"][0]
    assert (item["type"], item["sequence"], item["reference"]) == ("transfer.confirmed", 1, "T-2")
    assert item["data"] == {"reference": "T-2"}


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


BAD_EVENT_QUERIES = [
    ({"type": "transfer.paid"}, "type"),
    ({"subject": "payout"}, "subject"),
    ({"subject": "transfer:"}, "subject"),
    ({"since": "yesterday"}, "since"),
    ({"since": "0001-01-01T00:00:00+14:00"}, "since"),
    ({"limit": "0"}, "limit"),
    ({"limit": "501"}, "limit"),
    ({"limit": "١٠"}, "limit"),
    ({"cursor": "nonsense!"}, "cursor"),
    ({"cursor": encode_cursor(5)}, "cursor"),  # a transfers' cursor is not an events' one
    ({"cursor": _cursor(f"e:{2**63}")}, "cursor"),
    ({"cursor": _cursor("e:-1")}, "cursor"),
]


def test_bad_event_queries_are_400_naming_the_parameter(relay_url: str) -> None:
    """Unknown types or subjects, bad dates, limits and cursors: 400 invalid_query."""
    answers = [
        httpx.get(f"{relay_url}/api/events", params=q, headers=AUTH) for q, _ in BAD_EVENT_QUERIES
    ]
    seen = [(a.status_code, a.json()["error"], a.json()["parameter"]) for a in answers]
    assert seen == [(400, "invalid_query", p) for _, p in BAD_EVENT_QUERIES]


def test_an_event_shows_its_deliveries_and_their_attempts(relay_url: str, engine: Engine) -> None:
    """GET /api/events/{id} lists each endpoint's delivery with every attempt, oldest first."""
    one, two = _add(relay_url).json(), _add(relay_url).json()
    seeded = emit(engine, add_transfer(engine, "T-3"), "T-3")
    record_attempt(engine, seeded.delivery_ids[0], outcome="retry", status_code=503)
    record_attempt(engine, seeded.delivery_ids[0], outcome="delivered", status_code=200)
    answer = httpx.get(f"{relay_url}/api/events/{seeded.event_id}", headers=AUTH)
    assert answer.status_code == 200
    event = answer.json()
    assert (event["id"], event["type"], event["sequence"]) == (
        seeded.event_id,
        "transfer.confirmed",
        1,
    )
    first, second = event["deliveries"]
    assert (first["endpoint_id"], second["endpoint_id"]) == (one["id"], two["id"])
    assert first["status"] == "delivered" and first["attempt_count"] == 2
    assert [(a["status_code"], a["outcome"]) for a in first["attempts"]] == [
        (503, "retry"),
        (200, "delivered"),
    ]
    assert second["status"] == "pending" and second["attempts"] == []
    assert httpx.get(f"{relay_url}/api/endpoints/{one['id']}", headers=AUTH).json()["pending"] == 0
    assert httpx.get(f"{relay_url}/api/endpoints/{two['id']}", headers=AUTH).json()["pending"] == 1


@pytest.mark.parametrize(
    "event_id", ["evt_00000000000000000000000000", "evt_x", "nope", "evt_" + "I" * 26, "a%00b"]
)
def test_an_unknown_or_malformed_event_id_is_404(relay_url: str, event_id: str) -> None:
    """No such event, or no possible one: 404 not_found."""
    answer = httpx.get(f"{relay_url}/api/events/{event_id}", headers=AUTH)
    assert (answer.status_code, answer.json()["error"]) == (404, "not_found")


def test_retry_makes_a_failed_delivery_pending_and_due_now(relay_url: str, engine: Engine) -> None:
    """A failed delivery is pending again with its schedule reset; a pending one is due now; a
    delivered one, or one for a removed endpoint, is 409."""
    _add(relay_url)
    _add(relay_url)
    _add(relay_url)
    seeded = emit(engine, add_transfer(engine, "T-4"), "T-4")
    failed, pending, delivered = seeded.delivery_ids
    record_attempt(engine, failed, outcome="failed")
    record_attempt(engine, pending, outcome="retry")
    record_attempt(engine, delivered, outcome="delivered", status_code=204)
    before = dt.datetime.now(dt.UTC)
    again = httpx.post(f"{relay_url}/api/deliveries/{failed}/retry", headers=AUTH)
    sooner = httpx.post(f"{relay_url}/api/deliveries/{pending}/retry", headers=AUTH)
    done = httpx.post(f"{relay_url}/api/deliveries/{delivered}/retry", headers=AUTH)
    assert (again.status_code, sooner.status_code, done.status_code) == (200, 200, 409)
    assert (again.json()["status"], again.json()["attempt_count"]) == ("pending", 0)
    assert (sooner.json()["status"], sooner.json()["attempt_count"]) == ("pending", 1)
    for answer in (again, sooner):
        due = dt.datetime.fromisoformat(answer.json()["next_attempt_at"])
        assert before - dt.timedelta(seconds=1) <= due <= dt.datetime.now(dt.UTC)
    assert done.json()["error"] == "conflict"
    httpx.delete(f"{relay_url}/api/endpoints/1", headers=AUTH)
    orphan = httpx.post(f"{relay_url}/api/deliveries/{failed}/retry", headers=AUTH)
    assert (orphan.status_code, orphan.json()["error"]) == (409, "conflict")
    assert "removed endpoint" in orphan.json()["message"]


def test_without_relay_keys_adding_and_rotating_are_503(start_receiver: StartReceiver) -> None:
    """No PAYRECON_RELAY_KEYS: the routes that make a secret say so (503), reads still work."""
    with start_receiver(admin_token=ADMIN) as url:
        added = _add(url)
        rotated = httpx.post(f"{url}/api/endpoints/1/rotate-secret", headers=AUTH)
        listed = httpx.get(f"{url}/api/endpoints", headers=AUTH)
    assert (added.status_code, added.json()["error"]) == (503, "relay_not_configured")
    assert "PAYRECON_RELAY_KEYS" in added.json()["message"]
    assert rotated.status_code == 503 and listed.status_code == 200
