"""The reports page per role: figures for every role, forms and HTML refusals for people."""

from __future__ import annotations

import httpx
from sqlalchemy import Engine

from ledger.db import read_session
from ledger.models import Finding
from ledger.types import FindingKind
from tests.integration.admin.conftest import Cast, bearer
from tests.integration.console.seed import finding, transfer

BROWSER = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def test_a_viewer_reads_the_figures_but_gets_no_acknowledge_forms(
    cast: Cast, engine: Engine
) -> None:
    """A viewer's /reports shows the open finding without an Acknowledge form, finance's
    with one, and both read the same figures from /api/reports/summary."""
    finding_id = finding(engine, transfer(engine, "REP-1"), FindingKind.AMOUNT_MISMATCH)
    action = f'action="/reports/findings/{finding_id}/ack"'
    pages, summaries = {}, {}
    for role in ("viewer", "finance"):
        headers = bearer(cast.tokens[role])
        pages[role] = httpx.get(f"{cast.url}/reports", headers={**headers, **BROWSER})
        summaries[role] = httpx.get(f"{cast.url}/api/reports/summary", headers=headers)
    assert [pages[r].status_code for r in pages] == [200, 200]
    assert "REP-1" in pages["viewer"].text
    assert action not in pages["viewer"].text and "Acknowledge</button>" not in pages["viewer"].text
    assert action in pages["finance"].text
    assert [summaries[r].status_code for r in summaries] == [200, 200]
    assert summaries["viewer"].json() == summaries["finance"].json()
    assert summaries["viewer"].json()["open_findings"][0]["id"] == finding_id


def test_a_refused_acknowledge_from_a_browser_is_an_html_page(cast: Cast, engine: Engine) -> None:
    """A viewer's acknowledge, and finance's with a blank note, answer small HTML pages (a
    script still gets JSON), and the finding stays unacknowledged."""
    finding_id = finding(engine, transfer(engine, "REP-2"), FindingKind.FEE_MISMATCH)
    url = f"{cast.url}/reports/findings/{finding_id}/ack"
    viewer = {**bearer(cast.tokens["viewer"]), **BROWSER}
    finance = {**bearer(cast.tokens["finance"]), **BROWSER}
    refused = httpx.post(url, data={"note": "seen"}, headers=viewer)
    blank = httpx.post(url, data={"note": " "}, headers=finance)
    unknown = httpx.post(
        f"{cast.url}/reports/findings/99999/ack", data={"note": "x"}, headers=finance
    )
    scripted = httpx.post(url, data={"note": "seen"}, headers=bearer(cast.tokens["viewer"]))
    anonymous = httpx.post(url, data={"note": "seen"}, headers=BROWSER)
    for answer, status in ((refused, 403), (blank, 422), (unknown, 404), (anonymous, 401)):
        assert answer.status_code == status
        assert answer.headers["content-type"].startswith("text/html"), answer.text
        assert answer.text.startswith("<!doctype html>") and '"error"' not in answer.text
    assert "finance role" in refused.text and 'href="/reports"' in refused.text
    assert 'href="/reports"' in blank.text
    assert "www-authenticate" in anonymous.headers
    assert scripted.status_code == 403 and scripted.json()["error"] == "forbidden"
    with read_session(engine) as session:
        row = session.get(Finding, finding_id)
        assert row is not None and row.acknowledged_at is None
