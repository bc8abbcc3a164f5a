"""The findings workflow over the API: states, acknowledge one or many, assign, notes."""

from __future__ import annotations

import json
from typing import Any

import httpx
from sqlalchemy import Engine, select

from ledger.db import read_session, write_session
from ledger.events.findings import raise_finding
from ledger.events.types import Subject
from ledger.findings import MAX_NOTE_CHARS
from ledger.models import Collection, RelayEvent
from ledger.types import FindingKind
from tests.integration.console.seed import T0, finding, transfer
from tests.support.apps import ADMIN

AUTH = {"authorization": f"Bearer {ADMIN}"}


def _post(url: str, path: str, body: Any) -> httpx.Response:
    return httpx.post(f"{url}{path}", json=body, headers=AUTH)


def _queue(url: str, **query: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{url}/api/findings", params=query, headers=AUTH)
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


def test_bulk_acknowledge_is_all_or_nothing_with_one_event_each(
    engine: Engine, receiver_url: str
) -> None:
    """Two findings acknowledged with one note get state acknowledged, the note with its author,
    and one finding.acknowledged event each carrying the note; an unknown id changes nothing."""
    a = finding(engine, transfer(engine, "F-A"), FindingKind.AMOUNT_MISMATCH)
    b = finding(engine, transfer(engine, "F-B"), FindingKind.FEE_MISMATCH)
    c = finding(engine, transfer(engine, "F-C"), FindingKind.STALE_PENDING)
    refused = _post(receiver_url, "/api/findings/ack", {"ids": [a, 999_999], "note": "x"})
    done = _post(receiver_url, "/api/findings/ack", {"ids": [a, b, a], "note": "paid back"})
    assert refused.status_code == 404 and refused.json()["ids"] == [999_999]
    assert done.status_code == 200
    assert [i["id"] for i in done.json()["items"]] == [a, b]
    open_ids = [i["id"] for i in _queue(receiver_url, state="open")]
    acked = _queue(receiver_url, state="acknowledged")
    assert open_ids == [c]
    assert {i["id"] for i in acked} == {a, b}
    assert acked[0]["notes"][0]["author"] == "admin"
    assert acked[0]["notes"][0]["note"] == "paid back"
    with read_session(engine) as session:
        events = list(
            session.execute(
                select(RelayEvent.body).where(RelayEvent.type == "finding.acknowledged")  # type: ignore[arg-type]
            ).scalars()
        )
    assert [json.loads(e)["data"]["note"] for e in events] == ["paid back", "paid back"]


def test_bulk_acknowledge_refuses_bad_bodies(engine: Engine, receiver_url: str) -> None:
    """Empty, non-integer, negative, boolean and too many ids, and a missing note, are 422."""
    a = finding(engine, transfer(engine, "F-BAD"), FindingKind.AMOUNT_MISMATCH)
    bodies = [
        {"ids": [], "note": "x"},
        {"ids": ["1"], "note": "x"},
        {"ids": [-1], "note": "x"},
        {"ids": [True], "note": "x"},
        {"ids": [2**63], "note": "x"},
        {"ids": list(range(1, 300)), "note": "x"},
        {"ids": [a]},
        {"ids": [a], "note": ""},
        {"ids": "1", "note": "x"},
    ]
    statuses = [_post(receiver_url, "/api/findings/ack", body).status_code for body in bodies]
    not_json = httpx.post(
        f"{receiver_url}/api/findings/ack",
        content=b"{",
        headers={**AUTH, "content-type": "application/json"},
    )
    assert statuses == [422] * len(bodies)
    assert not_json.status_code == 400
    assert [i["id"] for i in _queue(receiver_url, state="open")] == [a]


def test_notes_are_bounded_and_control_characters_refused(
    engine: Engine, receiver_url: str
) -> None:
    """A note over the limit, with a control or bidi character, or not a string is 422; a
    hostile but printable note is stored as written, line breaks kept."""
    a = finding(engine, transfer(engine, "F-NOTE"), FindingKind.ORPHAN_EVENT)
    path = f"/api/findings/{a}/notes"
    refused = [
        _post(receiver_url, path, {"note": "x" * (MAX_NOTE_CHARS + 1)}).status_code,
        _post(receiver_url, path, {"note": "bell\x07"}).status_code,
        _post(receiver_url, path, {"note": "evil\u202etxt"}).status_code,
        _post(receiver_url, path, {"note": 5}).status_code,
    ]
    hostile = "<script>alert(\"x\")</script>\n'quoted' " + "W" * 500
    created = _post(receiver_url, path, {"note": hostile})
    assert refused == [422, 422, 422, 422]
    assert created.status_code == 201
    assert created.json()["notes"] == [
        {"author": "admin", "at": created.json()["notes"][0]["at"], "note": hostile}
    ]


def test_malformed_and_unknown_ids_are_400_and_404(receiver_url: str) -> None:
    """A finding id that is no number is 400, one no finding has is 404, on every action."""
    answers = [
        _post(receiver_url, "/api/findings/abc/ack", {"note": "x"}).status_code,
        _post(receiver_url, "/api/findings/-3/notes", {"note": "x"}).status_code,
        _post(receiver_url, "/api/findings/99999999999999999999/assign", {"assignee": None}),
        _post(receiver_url, "/api/findings/424242/ack", {"note": "x"}).status_code,
        _post(receiver_url, "/api/findings/424242/notes", {"note": "x"}).status_code,
        _post(receiver_url, "/api/findings/424242/assign", {"assignee": "admin"}).status_code,
    ]
    assert answers[:2] == [400, 400]
    assert isinstance(answers[2], httpx.Response) and answers[2].status_code == 400
    assert answers[3:] == [404, 404, 404]


def test_assign_and_unassign_filter_the_queue(engine: Engine, receiver_url: str) -> None:
    """Assigning sets the assignee the queue filters on; null unassigns; bad names are refused."""
    a = finding(engine, transfer(engine, "F-AS1"), FindingKind.AMOUNT_MISMATCH)
    b = finding(engine, transfer(engine, "F-AS2"), FindingKind.AMOUNT_MISMATCH)
    assigned = _post(receiver_url, f"/api/findings/{a}/assign", {"assignee": "admin"})
    missing = _post(receiver_url, f"/api/findings/{a}/assign", {})
    wrong_type = _post(receiver_url, f"/api/findings/{a}/assign", {"assignee": 7})
    mine = [i["id"] for i in _queue(receiver_url, assignee="admin")]
    nobody = [i["id"] for i in _queue(receiver_url, assignee="-")]
    unassigned = _post(receiver_url, f"/api/findings/{a}/assign", {"assignee": None})
    assert assigned.status_code == 200 and assigned.json()["assignee"] == "admin"
    assert (missing.status_code, wrong_type.status_code) == (422, 422)
    assert (mine, nobody) == ([a], [b])
    assert unassigned.json()["assignee"] is None
    assert sorted(i["id"] for i in _queue(receiver_url, assignee="-")) == sorted([a, b])


def test_queue_filters_are_checked_and_paged(engine: Engine, receiver_url: str) -> None:
    """Unknown state or kind and a foreign cursor are 400; pages follow the cursor."""
    ids = [
        finding(engine, transfer(engine, f"F-P{n}"), FindingKind.STALE_PENDING) for n in range(3)
    ]
    bad = [
        httpx.get(f"{receiver_url}/api/findings", params=q, headers=AUTH).status_code
        for q in ({"state": "closed"}, {"kind": "nope"}, {"cursor": "zzz"}, {"limit": "0"})
    ]
    first = httpx.get(f"{receiver_url}/api/findings?limit=2", headers=AUTH).json()
    second = httpx.get(
        f"{receiver_url}/api/findings", params={"cursor": first["next_cursor"]}, headers=AUTH
    ).json()
    assert bad == [400, 400, 400, 400]
    assert [i["id"] for i in first["items"] + second["items"]] == sorted(ids, reverse=True)
    assert second["next_cursor"] is None


def test_a_finding_has_one_shape_in_records_and_the_queue(
    engine: Engine, receiver_url: str
) -> None:
    """A finding on a transfer and one on a collection have the same keys in the transfer
    record, the collection record and `/api/findings`, and the assignee and note set through
    the API show in all three."""
    on_transfer = finding(engine, transfer(engine, "SHAPE-T"), FindingKind.AMOUNT_MISMATCH)
    registered = _post(
        receiver_url, "/api/collections/expected", {"reference": "SHAPE-C", "amount": 5000}
    )
    assert registered.status_code == 201, registered.text
    with write_session(engine) as session:
        row = session.execute(select(Collection).where(Collection.reference == "SHAPE-C"))  # type: ignore[arg-type]
        opened = raise_finding(
            session,
            subject=Subject.COLLECTION,
            subject_id=row.scalar_one().id,
            kind=FindingKind.UNDERPAID,
            detail="expected 5000 kobo; paid 10 kobo",
            now=T0,
        )
        assert opened is not None
        on_collection = opened.id
    for finding_id in (on_transfer, on_collection):
        assigned = _post(receiver_url, f"/api/findings/{finding_id}/assign", {"assignee": "admin"})
        noted = _post(receiver_url, f"/api/findings/{finding_id}/notes", {"note": "on it"})
        assert assigned.status_code == 200 and noted.status_code == 201
    from_transfer = httpx.get(f"{receiver_url}/api/transfers/SHAPE-T", headers=AUTH).json()
    from_collection = httpx.get(f"{receiver_url}/api/collections/SHAPE-C", headers=AUTH).json()
    queue = {item["id"]: item for item in _queue(receiver_url)}
    shown = [
        from_transfer["findings"][0],
        from_collection["findings"][0],
        queue[on_transfer],
        queue[on_collection],
    ]
    assert len({tuple(sorted(item)) for item in shown}) == 1
    assert from_transfer["findings"][0] == queue[on_transfer]
    assert from_collection["findings"][0] == queue[on_collection]
    for item in shown:
        assert item["assignee"] == "admin" and item["state"] == "open"
        assert [(n["author"], n["note"]) for n in item["notes"]] == [("admin", "on it")]
    assert {"id", "kind", "detail", "opened_at", "resolved_at", "acknowledged_at"} <= set(shown[0])
    assert from_collection["findings"][0]["subject"] == "collection"
