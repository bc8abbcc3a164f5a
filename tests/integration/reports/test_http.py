"""The report handlers served by a real uvicorn: JSON summary, HTML page, acknowledging."""

from __future__ import annotations

import datetime as dt

import httpx
from sqlalchemy import Engine, select

from ledger.db import read_session
from ledger.models import Finding
from reconcile.reports.period import parse_period
from reconcile.reports.summary import build_summary
from tests.integration.reports.ledgers import UTC, Spec, insert_ledger
from tests.integration.reports.pages import report_app
from tests.support.servers import running_server

START = dt.datetime(2025, 3, 1, 9, tzinfo=UTC)


def _ledger(engine: Engine) -> int:
    ids = insert_ledger(
        engine,
        [
            Spec(
                "h1",
                "successful",
                START,
                500_000,
                1000,
                provider_amount=500_000,
                provider_fee=1075,
                confirmed=True,
                findings=[("fee_mismatch", "open")],
            ),
            Spec("h2", "failed", START + dt.timedelta(days=2), 80_000, 1000, webhook_fee=1000),
        ],
    )
    with read_session(engine) as session:
        return session.execute(
            select(Finding.id).where(Finding.subject_id == ids["h1"])  # type: ignore[arg-type]
        ).scalar_one()


def test_summary_api_equals_build_summary_for_the_period(engine: Engine) -> None:
    """`/api/reports/summary?since=&until=` answers the same JSON as the summary function."""
    _ledger(engine)
    with running_server(report_app(engine)) as base:
        answer = httpx.get(f"{base}/api/reports/summary?since=2025-03-01&until=2025-03-02")
    assert answer.status_code == 200
    with read_session(engine) as session:
        expected = build_summary(session, parse_period("2025-03-01", "2025-03-02"))
    assert answer.json() == expected
    assert answer.json()["transfers"]["total"] == 1


def test_bad_dates_answer_400_json_never_500(engine: Engine) -> None:
    """A malformed or reversed period is a 400 JSON error on both GET routes."""
    with running_server(report_app(engine)) as base:
        answers = [
            httpx.get(f"{base}/api/reports/summary?since=2025-02-30"),
            httpx.get(f"{base}/reports?until=03/01/2025"),
            httpx.get(f"{base}/api/reports/summary?since=2025-03-05&until=2025-03-01"),
        ]
    assert [a.status_code for a in answers] == [400, 400, 400]
    assert all(a.json()["error"] == "invalid_period" for a in answers)


def test_reports_page_is_html_with_period_and_ack_forms(engine: Engine) -> None:
    """The page carries the totals, a period picker and a POST form for the open finding."""
    finding_id = _ledger(engine)
    with running_server(report_app(engine)) as base:
        page = httpx.get(f"{base}/reports?since=2025-03-01")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert 'name="since" value="2025-03-01"' in page.text
    assert f'action="/reports/findings/{finding_id}/ack"' in page.text
    assert "₦5,020.75" in page.text  # wallet debit: 5,000 + 10.75 + 10.00 failed fee


def test_acknowledge_marks_the_finding_and_redirects_back(engine: Engine) -> None:
    """A POST with a note acknowledges and answers 303 to the page for the same period."""
    finding_id = _ledger(engine)
    with running_server(report_app(engine)) as base:
        answer = httpx.post(
            f"{base}/reports/findings/{finding_id}/ack",
            data={"note": "claimed from provider", "since": "2025-03-01", "until": ""},
        )
        page = httpx.get(f"{base}/reports")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/reports?since=2025-03-01"
    with read_session(engine) as session:
        finding = session.get(Finding, finding_id)
        assert finding is not None
        assert finding.ack_note == "claimed from provider" and finding.acknowledged_at is not None
    assert "claimed from provider" in page.text


def test_acknowledge_refuses_unknown_ids_and_empty_notes(engine: Engine) -> None:
    """Unknown finding → 404 JSON; a blank note or one with a NUL → 422 naming the note, as the
    API answers (a lone surrogate → 400), and the finding stays unacknowledged."""
    finding_id = _ledger(engine)
    with running_server(report_app(engine)) as base:
        unknown = httpx.post(f"{base}/reports/findings/9999/ack", data={"note": "x"})
        empty = httpx.post(f"{base}/reports/findings/{finding_id}/ack", data={"note": " "})
        nul = httpx.post(f"{base}/reports/findings/{finding_id}/ack", data={"note": "a\x00b"})
        half = httpx.post(
            f"{base}/reports/findings/{finding_id}/ack",
            content=b'{"note": "\\ud800"}',
            headers={"content-type": "application/json"},
        )
        with read_session(engine) as session:
            untouched = session.get(Finding, finding_id)
            assert untouched is not None and untouched.acknowledged_at is None
        as_json = httpx.post(f"{base}/reports/findings/{finding_id}/ack", json={"note": "ok"})
    assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
    assert (empty.status_code, empty.json()["error"], empty.json()["field"]) == (
        422,
        "invalid",
        "note",
    )
    # A NUL was a 503 on PostgreSQL (the driver refused it), a lone surrogate a 500.
    assert (nul.status_code, nul.json()["error"], nul.json()["field"]) == (422, "invalid", "note")
    # A lone surrogate is no Unicode text: the body reader refuses it before the note is read.
    assert (half.status_code, half.json()["error"]) == (400, "malformed_json")
    assert as_json.status_code == 303 and as_json.headers["location"] == "/reports"
