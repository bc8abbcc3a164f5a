"""The report's answers stay small however many findings are open (PRODUCT.md: bounded answers)."""

from __future__ import annotations

import datetime as dt

import httpx
from sqlalchemy import Engine, insert, select

from ledger.db import read_session, write_session
from ledger.models import Finding, Transfer
from ledger.types import utcnow
from reconcile.reports.summary import build_summary
from tests.integration.reports.pages import report_app
from tests.support.servers import running_server

OPEN = 100_000
CHUNK = 10_000


def _insert_open_findings(engine: Engine, count: int) -> dt.datetime:
    """`count` pending transfers a day old, each with an open stale_pending finding, written in
    bulk; the time they were created."""
    created = utcnow() - dt.timedelta(days=1)
    transfers = Transfer.__table__  # type: ignore[attr-defined]
    findings = Finding.__table__  # type: ignore[attr-defined]
    for start in range(0, count, CHUNK):
        with write_session(engine) as session:
            session.execute(
                insert(transfers),
                [
                    {
                        "reference": f"BULK-{n:06d}",
                        "origin": "expected",
                        "status": "pending",
                        "confirmed": False,
                        "amount": 100_000,
                        "fee": 1_000,
                        "created_at": created,
                        "updated_at": created,
                    }
                    for n in range(start, min(start + CHUNK, count))
                ],
            )
            ids = session.execute(
                select(transfers.c.id).where(
                    transfers.c.reference >= f"BULK-{start:06d}",
                    transfers.c.reference < f"BULK-{start + CHUNK:06d}",
                )
            ).scalars()
            session.execute(
                insert(findings),
                [
                    {
                        "subject": "transfer",
                        "subject_id": transfer_id,
                        "kind": "stale_pending",
                        "detail": "pending for 86400 s (limit 1800 s)",
                        "opened_at": created,
                        "updated_at": created,
                    }
                    for transfer_id in ids
                ],
            )
    return created


def test_summary_and_page_stay_small_with_100000_open_findings(engine: Engine) -> None:
    """With 100,000 open findings and stale transfers, /api/reports/summary lists the first 100
    of each with whole counts, a truncated marker and where to read the rest, in under 150 KB,
    and /reports stays under 400 KB; the report files (no limit) still hold every finding."""
    _insert_open_findings(engine, OPEN)
    with running_server(report_app(engine)) as base:
        summary = httpx.get(f"{base}/api/reports/summary", timeout=120)
        page = httpx.get(f"{base}/reports", timeout=120)
    assert summary.status_code == 200 and page.status_code == 200
    body = summary.json()
    assert len(body["open_findings"]) == 100 and len(body["stale_pending"]) == 100
    assert body["open_findings_count"] == OPEN and body["stale_pending_count"] == OPEN
    assert body["open_findings_truncated"] is True and body["stale_pending_truncated"] is True
    assert body["open_findings_more"].startswith("/api/findings")
    assert body["stale_pending_more"].startswith("/api/transfers")
    assert body["findings"]["stale_pending"] == OPEN
    assert body["open_findings"][0]["reference"] == "BULK-000000"
    assert len(summary.content) < 150_000
    assert len(page.content) < 400_000
    assert "100,000" in page.text and 'href="/console/findings?state=open"' in page.text
    with read_session(engine) as session:
        full = build_summary(session)
    assert len(full["open_findings"]) == OPEN and full["open_findings_truncated"] is False
    assert full["open_findings_more"] is None


def test_a_small_ledger_is_listed_whole_and_not_truncated(engine: Engine) -> None:
    """Three open findings: all listed, counts equal the lists, nothing truncated."""
    _insert_open_findings(engine, 3)
    with running_server(report_app(engine)) as base:
        body = httpx.get(f"{base}/api/reports/summary").json()
    assert len(body["open_findings"]) == body["open_findings_count"] == 3
    assert len(body["stale_pending"]) == body["stale_pending_count"] == 3
    assert body["open_findings_truncated"] is False and body["stale_pending_truncated"] is False
    assert body["open_findings_more"] is None and body["stale_pending_more"] is None
