"""Console pages over HTTP: hostile text escaped everywhere, CSRF on every form, roles."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import Engine, select

from admin.console.render import ERROR_BANNERS
from admin.expected import parse_expected_collection, register_collection
from ledger.collections import find_collection
from ledger.db import read_session, write_session
from ledger.events.findings import raise_finding
from ledger.events.outbox import emit
from ledger.events.types import RelayEventType, Subject
from ledger.models import Finding, RelayDelivery, RelayEndpoint, Transfer
from ledger.operators import add_operator
from ledger.types import FindingKind, utcnow
from tests.integration.console.seed import finding, transfer
from tests.support.apps import ADMIN, StartReceiver

HOSTILE = '<script>alert("x")</script>\'"&' + "W" * 300
AUTH = {"authorization": f"Bearer {ADMIN}"}
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def _seed(engine: Engine) -> dict[str, int]:
    """A hostile transfer (reference, failure reason), its finding with a hostile note, an
    endpoint with one delivery; operators of each role."""
    tid = transfer(engine, HOSTILE[:100], provider_reference="PRV-H")
    fid = finding(engine, tid, FindingKind.STATUS_CONFLICT, HOSTILE)
    now = utcnow()
    with write_session(engine) as session:
        row = session.get(Transfer, tid)
        assert row is not None
        row.failure_reason = HOSTILE
        session.add(
            RelayEndpoint(url="http://127.0.0.1:9/<script>", secret_sealed="x", description=HOSTILE)
        )
        session.flush()
        emit(
            session,
            type=RelayEventType.FINDING_OPENED,
            subject=Subject.TRANSFER,
            subject_id=tid,
            reference=row.reference,
            data={"id": fid},
            now=now,
        )
        delivery = session.execute(select(RelayDelivery)).scalars().first()
        for name, role in (("vera", "viewer"), ("finn", "finance")):
            add_operator(session, name=name, role=role, now=now)
    return {"transfer": tid, "finding": fid, "delivery": delivery.id if delivery else 0}


@pytest.fixture
def console(engine: Engine, start_receiver: StartReceiver) -> Iterator[tuple[str, dict[str, int]]]:
    """A receiver over a ledger seeded with hostile text."""
    ids = _seed(engine)
    with start_receiver(admin_token=ADMIN, insecure_cookies=True) as url:
        yield url, ids


def _pages(ids: dict[str, int]) -> list[str]:
    return [
        "/console",
        "/console/transfers",
        "/console/transfers?q=" + httpx.QueryParams({"x": HOSTILE[:100]})["x"],
        "/console/transfers/PRV-H",
        "/console/findings?state=",
        "/console/endpoints",
        "/console/audit?operator=%3Cscript%3E",
        "/console/transfers/%3Cscript%3E",
    ]


def test_hostile_text_is_escaped_on_every_page(console: tuple[str, dict[str, int]]) -> None:
    """No page echoes a raw `<script>` from a reference, reason, note, detail, URL or query;
    each keeps its CSP without script sources."""
    url, ids = console
    note = httpx.post(
        f"{url}/api/findings/{ids['finding']}/notes", json={"note": HOSTILE}, headers=AUTH
    )
    assert note.status_code == 201
    for path in _pages(ids):
        answer = httpx.get(f"{url}{path}", headers=AUTH)
        assert answer.status_code in (200, 404), path
        assert "<script" not in answer.text, path
        policy = answer.headers["content-security-policy"]
        assert "script-src" not in policy and "default-src 'none'" in policy, path
    detail = httpx.get(f"{url}/console/transfers/PRV-H", headers=AUTH).text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in detail


def _token(url: str, headers: dict[str, str]) -> str:
    match = CSRF.search(httpx.get(f"{url}/console/findings?state=", headers=headers).text)
    assert match is not None
    return match.group(1)


def _forms(ids: dict[str, int]) -> list[tuple[str, dict[str, str]]]:
    fid = ids["finding"]
    return [
        ("/console/findings/ack", {"ids": str(fid), "note": "ok"}),
        (f"/console/findings/{fid}/assign", {"assignee": "finn"}),
        (f"/console/findings/{fid}/notes", {"note": "seen"}),
        (
            "/console/findings/bulk",
            {"action": "assign", "assign_to": "finn", "expected_count": "1"},
        ),
        (f"/console/deliveries/{ids['delivery']}/retry", {}),
        ("/console/endpoints/1/replay", {"type": "", "since": ""}),
        ("/logout", {}),
    ]


def test_every_console_form_is_refused_without_its_csrf_token(
    console: tuple[str, dict[str, int]],
) -> None:
    """Each state-changing form is 403 with no token and with a wrong one; with the page's
    token it is done and redirects back (303)."""
    url, ids = console
    login = httpx.post(f"{url}/login", data={"token": ADMIN, "next": "/console"})
    cookies = login.cookies
    assert login.status_code == 303 and cookies.get("payrecon_session")
    with httpx.Client(base_url=url, cookies=cookies) as client:
        token = CSRF.search(client.get("/console/findings?state=").text)
        assert token is not None
        for path, form in _forms(ids):
            missing = client.post(path, data=form)
            wrong = client.post(path, data={**form, "csrf_token": "forged"})
            assert (missing.status_code, wrong.status_code) == (403, 403), path
        for path, form in _forms(ids):
            done = client.post(path, data={**form, "csrf_token": token.group(1)})
            assert done.status_code == 303, (path, done.text[:200])
            assert "error=" not in done.headers["location"], (path, done.headers["location"])


def test_roles_decide_what_a_page_offers_and_accepts(
    engine: Engine, console: tuple[str, dict[str, int]]
) -> None:
    """A viewer reads pages but gets no work forms and 403 on posting one; the audit page is
    an admin's; nobody signed in is sent to the login page."""
    url, ids = console
    with write_session(engine) as session:
        _, viewer = add_operator(session, name="vic", role="viewer", now=utcnow())
    as_viewer = {"authorization": f"Bearer {viewer}"}
    queue = httpx.get(f"{url}/console/findings?state=", headers=as_viewer)
    token = CSRF.search(queue.text)
    assert queue.status_code == 200 and "Acknowledge ticked" not in queue.text
    assert token is not None
    posted = httpx.post(
        f"{url}/console/findings/{ids['finding']}/notes",
        data={"note": "x", "csrf_token": token.group(1)},
        headers=as_viewer,
    )
    audit = httpx.get(f"{url}/console/audit", headers=as_viewer)
    anonymous = httpx.get(f"{url}/console/findings")
    assert (posted.status_code, audit.status_code) == (403, 403)
    assert anonymous.status_code == 303
    assert anonymous.headers["location"].startswith("/console/login?next=")
    with read_session(engine) as session:
        assert session.get(Finding, ids["finding"]) is not None


def test_bad_form_input_is_explained_not_a_500(console: tuple[str, dict[str, int]]) -> None:
    """Empty ticks, an unknown operator, a control character, unknown ids and a foreign
    `back` all redirect with an error to a console page."""
    url, ids = console
    token = _token(url, AUTH)
    fid = ids["finding"]
    cases = [
        ("/console/findings/ack", {"note": "x"}, "none_ticked"),
        ("/console/findings/ack", {"ids": "abc", "note": "x"}, "bad_finding_ids"),
        ("/console/findings/ack", {"ids": "99999", "note": "x"}, "missing_findings"),
        (f"/console/findings/{fid}/assign", {"assignee": "nobody-here"}, "unknown_operator"),
        (f"/console/findings/{fid}/notes", {"note": "a\x1bb"}, "note_refused"),
        (f"/console/findings/{fid}/notes", {"note": "x", "back": "//evil.example"}, None),
    ]
    for path, form, code in cases:
        answer = httpx.post(f"{url}{path}", data={**form, "csrf_token": token}, headers=AUTH)
        location = answer.headers.get("location", "")
        assert answer.status_code == 303 and location.startswith("/console/findings"), path
        assert httpx.QueryParams(location.partition("?")[2]).get("error") == code, location
        if code is not None:
            page = httpx.get(f"{url}{location}", headers=AUTH)
            assert html.escape(ERROR_BANNERS[code]) in page.text, (path, location)


def test_banners_come_from_fixed_codes_never_from_the_query_string(
    console: tuple[str, dict[str, int]],
) -> None:
    """A known code shows its fixed text; any other `error` or `done` text shows no banner."""
    url, _ = console
    lure = "Your session expired: call +234 800 000 0000 now"
    known = httpx.get(f"{url}/console", params={"error": "none_ticked"}, headers=AUTH)
    free = httpx.get(f"{url}/console", params={"error": lure, "done": lure}, headers=AUTH)
    assert ERROR_BANNERS["none_ticked"] in known.text and 'role="alert"' in known.text
    assert free.status_code == 200 and "call +234" not in free.text
    assert 'role="alert"' not in free.text and 'role="status"' not in free.text


def test_a_collection_has_its_list_page_timeline_and_queue_entry(
    engine: Engine, start_receiver: StartReceiver
) -> None:
    """A collection with a hostile reference and an open finding: the collections list finds
    it by either reference, its page shows the finding and its timeline escaped, and the
    findings queue lists the finding as a collection's, linking to the collection's page."""
    now = utcnow()
    with write_session(engine) as session:
        expected = parse_expected_collection({"reference": HOSTILE[:90], "amount": 250_000})
        register_collection(session, expected, now=now)
        row = find_collection(session, HOSTILE[:90])
        assert row is not None and row.id is not None
        row.provider_reference = "PRV-COLL-1"
        raise_finding(
            session,
            kind=FindingKind.UNDERPAID,
            detail="paid 100000 of 250000 kobo",
            now=now,
            subject=Subject.COLLECTION,
            subject_id=row.id,
            reference=row.reference,
        )
    with start_receiver(admin_token=ADMIN, insecure_cookies=True) as url:
        listed = httpx.get(f"{url}/console/collections", headers=AUTH)
        found = httpx.get(f"{url}/console/collections?q=PRV-COLL-1", headers=AUTH)
        page = httpx.get(f"{url}/console/collections/PRV-COLL-1", headers=AUTH)
        queue = httpx.get(f"{url}/console/findings", headers=AUTH)
        api = httpx.get(f"{url}/api/findings", headers=AUTH).json()
        missing = httpx.get(f"{url}/console/collections/NOPE-1", headers=AUTH)
    escaped = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
    for answer in (listed, found, page, queue):
        assert answer.status_code == 200
        assert "<script" not in answer.text
        assert escaped in answer.text
    assert "underpaid" in page.text and "recorded (expected)" in page.text
    assert "/console/collections/%3Cscript%3E" in queue.text
    [item] = api["items"]
    assert item["subject"] == "collection" and item["kind"] == "underpaid"
    assert missing.status_code == 404 and "No collection has the reference" in missing.text
