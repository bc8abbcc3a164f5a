"""Working findings by filter over the API: the confirmed count, batches, audit, roles; the queue's
totals, amount sort and reference prefix search."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func, select, text

from admin.actions import findings_bulk
from ledger.db import read_session, write_session
from ledger.models import AuditEntry, Finding, FindingNote, RelayEvent, Transfer
from ledger.operators import add_operator
from ledger.types import FindingKind, utcnow
from tests.integration.console.seed import finding, transfer
from tests.support.apps import ADMIN

AUTH = {"authorization": f"Bearer {ADMIN}"}


def _post(url: str, path: str, body: Any, headers: dict[str, str] = AUTH) -> httpx.Response:
    return httpx.post(f"{url}{path}", json=body, headers=headers, timeout=60)


def _get(url: str, **query: str) -> dict[str, Any]:
    answer = httpx.get(f"{url}/api/findings", params=query, headers=AUTH)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _seed(engine: Engine, count: int, kind: FindingKind, prefix: str, **extra: Any) -> list[int]:
    return [
        finding(engine, transfer(engine, f"{prefix}-{i:04d}", **extra), kind) for i in range(count)
    ]


def _count(engine: Engine, statement: Any) -> int:
    with read_session(engine) as session:
        return int(session.execute(statement).scalar_one())


def _acked(engine: Engine) -> int:
    return _count(
        engine,
        select(func.count()).select_from(Finding).where(Finding.acknowledged_at.is_not(None)),  # type: ignore[union-attr]
    )


def test_acknowledge_by_filter_changes_exactly_the_matching_open_findings(
    engine: Engine, receiver_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve open stale findings acknowledged by kind (in batches of five) each get the note,
    one event and one audit row; the other kind stays open; a re-run finds none left."""
    monkeypatch.setattr(findings_bulk, "BATCH", 5)  # the server runs in this process
    stale = _seed(engine, 12, FindingKind.STALE_PENDING, "BULK")
    other = _seed(engine, 2, FindingKind.AMOUNT_MISMATCH, "KEEP")
    body = {"filter": {"kind": "stale_pending"}, "expected_count": 12, "note": "provider outage"}
    done = _post(receiver_url, "/api/findings/ack", body)
    again = _post(receiver_url, "/api/findings/ack", {**body, "expected_count": 0})
    assert done.status_code == 200, done.text
    assert done.json() == {"matched": 12, "changed": 12, "skipped": 0, "batches": 3}
    assert again.json() == {"matched": 0, "changed": 0, "skipped": 0, "batches": 0}
    assert {i["id"] for i in _get(receiver_url, state="open")["items"]} == set(other)
    assert {i["id"] for i in _get(receiver_url, state="acknowledged")["items"]} == set(stale)
    with read_session(engine) as session:
        audits = list(
            session.execute(select(AuditEntry).where(AuditEntry.action == "finding.ack")).scalars()  # type: ignore[arg-type]
        )
        events = list(
            session.execute(
                select(RelayEvent.body).where(RelayEvent.type == "finding.acknowledged")  # type: ignore[arg-type]
            ).scalars()
        )
        notes = session.execute(select(func.count()).select_from(FindingNote)).scalar_one()
    assert sorted(a.subject for a in audits) == sorted(f"finding:{i}" for i in stale)
    assert {(a.operator, a.detail) for a in audits} == {("admin", "provider outage")}
    assert len(events) == 12 and {json.loads(e)["data"]["note"] for e in events} == {
        "provider outage"
    }
    assert notes == 12


def test_a_count_that_changed_is_409_and_changes_nothing(engine: Engine, receiver_url: str) -> None:
    """Confirming 3 when 4 match (one raised since the page was shown) is 409 with the current
    count, for acknowledge and assign alike, and nothing is acknowledged, assigned or audited."""
    _seed(engine, 4, FindingKind.ORPHAN_EVENT, "RACE")
    ack = _post(
        receiver_url,
        "/api/findings/ack",
        {"filter": {"kind": "orphan_event"}, "expected_count": 3, "note": "x"},
    )
    assign = _post(
        receiver_url,
        "/api/findings/assign",
        {"filter": {"kind": "orphan_event"}, "expected_count": 5, "assignee": "admin"},
    )
    assert ack.status_code == 409 and assign.status_code == 409
    assert ack.json()["error"] == "count_changed"
    assert (ack.json()["count"], ack.json()["expected_count"]) == (4, 3)
    assert assign.json()["count"] == 4
    assert _acked(engine) == 0
    assert _count(engine, select(func.count()).select_from(AuditEntry)) == 0
    assert _get(receiver_url, state="open", assignee="-")["total"] == 4


def test_nothing_matching_is_a_harmless_zero(engine: Engine, receiver_url: str) -> None:
    """A filter no finding matches, confirmed as 0, does nothing and says so."""
    _seed(engine, 1, FindingKind.ORPHAN_EVENT, "ZERO")
    answer = _post(
        receiver_url,
        "/api/findings/ack",
        {"filter": {"reference": "no-such-"}, "expected_count": 0, "note": "x"},
    )
    assert answer.status_code == 200
    assert answer.json()["changed"] == 0
    assert _acked(engine) == 0


def test_assign_by_filter_audits_each_and_unassigns_with_null(
    engine: Engine, receiver_url: str
) -> None:
    """Assigning every unresolved finding of a reference prefix gives them to the operator,
    one audit row each; null gives them back to nobody; an unknown name is 400."""
    mine = _seed(engine, 3, FindingKind.FEE_MISMATCH, "ASG")
    _seed(engine, 2, FindingKind.FEE_MISMATCH, "NOT")
    base = {"filter": {"reference": "asg-"}, "expected_count": 3}
    unknown = _post(receiver_url, "/api/findings/assign", {**base, "assignee": "nobody-here"})
    given = _post(receiver_url, "/api/findings/assign", {**base, "assignee": "admin"})
    assert unknown.status_code == 400
    assert given.status_code == 200 and given.json()["changed"] == 3
    assert {i["id"] for i in _get(receiver_url, assignee="admin")["items"]} == set(mine)
    back = _post(receiver_url, "/api/findings/assign", {**base, "assignee": None})
    assert back.json()["changed"] == 3
    assert _get(receiver_url, assignee="-")["total"] == 5
    with read_session(engine) as session:
        details = list(
            session.execute(
                select(AuditEntry.detail).where(AuditEntry.action == "finding.assign")  # type: ignore[arg-type]
            ).scalars()
        )
    assert sorted(details) == ["admin"] * 3 + ["nobody"] * 3


@pytest.mark.parametrize(
    "body",
    [
        {"filter": [], "expected_count": 0, "note": "x"},
        {"filter": "kind=orphan_event", "expected_count": 0, "note": "x"},
        {"filter": {"colour": "red"}, "expected_count": 0, "note": "x"},
        {"filter": {"kind": "no_such_kind"}, "expected_count": 0, "note": "x"},
        {"filter": {"state": "closed"}, "expected_count": 0, "note": "x"},
        {"filter": {"kind": 5}, "expected_count": 0, "note": "x"},
        {"filter": {"reference": "R" * 101}, "expected_count": 0, "note": "x"},
        {"filter": {"reference": "a\x00b"}, "expected_count": 0, "note": "x"},
        {"filter": {"k" * 10_000: "v"}, "expected_count": 0, "note": "x"},
        {"filter": {}, "note": "x"},
        {"filter": {}, "expected_count": -1, "note": "x"},
        {"filter": {}, "expected_count": True, "note": "x"},
        {"filter": {}, "expected_count": "2", "note": "x"},
        {"filter": {}, "expected_count": 10**12, "note": "x"},
        {"filter": {}, "expected_count": 0},
        {"filter": {}, "expected_count": 0, "note": ""},
        {"filter": {}, "ids": [1], "expected_count": 0, "note": "x"},
    ],
)
def test_malformed_bulk_bodies_are_4xx_and_change_nothing(
    engine: Engine, receiver_url: str, body: dict[str, Any]
) -> None:
    """Malformed, hostile and oversized filters and counts are refused with a 4xx."""
    _seed(engine, 1, FindingKind.ORPHAN_EVENT, "MAL")
    answer = _post(receiver_url, "/api/findings/ack", body)
    assert 400 <= answer.status_code < 500 and answer.status_code != 409, answer.text
    assert _acked(engine) == 0


def test_a_huge_body_is_refused(engine: Engine, receiver_url: str) -> None:
    """A filter body past the API's body limit is 413, not read whole."""
    body = {"filter": {"reference": "x" * 2_000_000}, "expected_count": 0, "note": "x"}
    assert _post(receiver_url, "/api/findings/ack", body).status_code == 413


def test_viewers_may_not_work_findings_by_filter(engine: Engine, receiver_url: str) -> None:
    """A viewer's bulk acknowledge or assign is 403 and changes nothing."""
    _seed(engine, 2, FindingKind.ORPHAN_EVENT, "VIEW")
    with write_session(engine) as session:
        _, token = add_operator(session, name="vera", role="viewer", now=utcnow())
    viewer = {"authorization": f"Bearer {token}"}
    body = {"filter": {}, "expected_count": 2, "note": "x", "assignee": None}
    answers = [
        _post(receiver_url, "/api/findings/ack", body, viewer).status_code,
        _post(receiver_url, "/api/findings/assign", body, viewer).status_code,
    ]
    assert answers == [403, 403]
    assert _acked(engine) == 0


def test_the_queue_has_totals_counts_and_positions(engine: Engine, receiver_url: str) -> None:
    """The queue says how many match, where each page starts, and counts unresolved findings
    per kind and state (its own kind and state filters set aside)."""
    ids = _seed(engine, 7, FindingKind.STALE_PENDING, "TOT")
    _seed(engine, 2, FindingKind.ORPHAN_EVENT, "TOT-O")
    _post(receiver_url, f"/api/findings/{ids[0]}/ack", {"note": "seen"})
    first = _get(receiver_url, kind="stale_pending", state="open", limit="4")
    second = _get(
        receiver_url, kind="stale_pending", state="open", limit="4", cursor=first["next_cursor"]
    )
    assert (first["total"], first["offset"], len(first["items"])) == (6, 0, 4)
    assert (second["total"], second["offset"], len(second["items"])) == (6, 4, 2)
    assert second["next_cursor"] is None
    assert first["counts"] == {
        "orphan_event": {"open": 2, "acknowledged": 0},
        "stale_pending": {"open": 6, "acknowledged": 1},
    }


def test_sort_by_amount_at_stake_pages_largest_first(engine: Engine, receiver_url: str) -> None:
    """Findings sorted by amount at stake come largest first (ties newest first), across pages,
    each showing its amount at stake; a bad sort or cursor is 400."""
    amounts = [300, 100_000, 5_000, 100_000, 42]
    ids = [
        finding(engine, transfer(engine, f"AMT-{i}", amount=a), FindingKind.STALE_PENDING)
        for i, a in enumerate(amounts)
    ]
    first = _get(receiver_url, sort="amount", limit="2")
    rest = _get(receiver_url, sort="amount", limit="10", cursor=first["next_cursor"])
    got = [(i["amount_at_stake"], i["id"]) for i in first["items"] + rest["items"]]
    assert got == sorted(zip(amounts, ids, strict=True), reverse=True)
    assert (first["total"], rest["offset"]) == (5, 2)
    bad_sort = httpx.get(f"{receiver_url}/api/findings", params={"sort": "x"}, headers=AUTH)
    bad_cursor = httpx.get(
        f"{receiver_url}/api/findings", params={"sort": "amount", "cursor": "Zg"}, headers=AUTH
    )
    assert (bad_sort.status_code, bad_cursor.status_code) == (400, 400)


def test_reference_search_is_a_case_insensitive_prefix(engine: Engine, receiver_url: str) -> None:
    """`reference=` finds findings by a prefix of either reference in any case, and only those."""
    a = finding(engine, transfer(engine, "Pay-2026-001"), FindingKind.ORPHAN_EVENT)
    b = finding(
        engine,
        transfer(engine, "X-1", provider_reference="psp-77"),
        FindingKind.ORPHAN_EVENT,
    )
    finding(engine, transfer(engine, "PAZ-1"), FindingKind.ORPHAN_EVENT)
    finding(engine, transfer(engine, "OPAY-1"), FindingKind.ORPHAN_EVENT)
    assert [i["id"] for i in _get(receiver_url, reference="pay-")["items"]] == [a]
    assert [i["id"] for i in _get(receiver_url, reference="PAY-2026-001")["items"]] == [a]
    assert [i["id"] for i in _get(receiver_url, reference="PSP")["items"]] == [b]
    assert _get(receiver_url, reference="pay-2027")["items"] == []


def test_reference_search_uses_the_reference_key_index(engine: Engine) -> None:
    """The prefix search is a range on the indexed upper-cased key, on both databases (the
    plan names the index; never a `LIKE '%…'` scan)."""
    from ledger.finding_queue import FindingFilter, matching
    from ledger.reference_search import matching_rows

    with write_session(engine) as session:
        statement = matching_rows(Transfer, "PAY-")
        compiled = statement.compile(engine, compile_kwargs={"literal_binds": True})
        if engine.dialect.name == "postgresql":
            session.execute(text("SET LOCAL enable_seqscan = off"))
            plan = session.execute(text(f"EXPLAIN {compiled}")).scalars().all()
        else:
            plan = [r[-1] for r in session.execute(text(f"EXPLAIN QUERY PLAN {compiled}"))]
        whole = matching(select(Finding.id), FindingFilter(reference="PAY-"))
        assert " LIKE " not in str(whole.compile(engine)).upper()
    joined = "\n".join(plan)
    assert "ix_transfer_reference_key" in joined, joined
    assert "ix_transfer_provider_reference_key" in joined, joined


def test_one_assignees_summary_is_counted_from_its_covering_index(engine: Engine) -> None:
    """The queue's summary for one assignee (the "Mine" link) reads the assignee's entries of
    ix_finding_assignee_unresolved (migration 0014) on SQLite, an assignee index on PostgreSQL;
    never every unresolved finding."""
    from sqlalchemy import event

    from ledger.finding_queue import FindingFilter, queue_counts

    seen: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, params: Any, *rest: Any) -> None:
        if "GROUP BY" in statement:
            seen.append((statement, params))

    event.listen(engine, "before_cursor_execute", capture)
    try:
        with read_session(engine) as session:
            queue_counts(session, FindingFilter(assignee="ada"))
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    assert len(seen) == 1
    statement, params = seen[0]
    with write_session(engine) as session:
        connection = session.connection()
        if engine.dialect.name == "postgresql":
            connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
            plan = [r[0] for r in connection.exec_driver_sql(f"EXPLAIN {statement}", params)]
        else:
            explained = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", params)
            plan = [r[-1] for r in explained]
    joined = "\n".join(plan)
    # PostgreSQL picks between the assignee's two indexes by size (on a near-empty test table
    # the narrower one); either way it is an index range, never a scan of every finding.
    wanted = (
        "ix_finding_assignee"
        if engine.dialect.name == "postgresql"
        else "ix_finding_assignee_unresolved"
    )
    assert wanted in joined and "Seq Scan" not in joined, joined
