"""The findings queue in headless Chromium: a storm of findings cleared in one confirmed action."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, func, select

from ledger.db import read_session, write_session
from ledger.models import AuditEntry, Finding
from ledger.operators import add_operator
from ledger.types import FindingKind, utcnow
from payrecon.app import create_app
from payrecon.settings import load_settings
from tests.integration.console.seed import finding, transfer
from tests.integration.console.test_browser import _artefacts, _shoot, _watch
from tests.integration.reports.test_browser import CHROMIUM, CHROMIUM_ARGS, _require_browser
from tests.support.servers import running_server

STORM = 30


def test_finance_clears_a_storm_by_filter_after_confirming_the_count(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    """A finance operator filters the queue to one kind, sees "1–30 of 30" and the counts,
    sorts by amount at stake, acknowledges all 30 matching with one note (the button shows
    the count), and every one is acknowledged and audited while the other kind stays open."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    for n in range(STORM):
        finding(
            engine,
            transfer(engine, f"STORM-{n:03d}", amount=100_000 + n * 1_000),
            FindingKind.STALE_PENDING,
        )
    finding(engine, transfer(engine, "CALM-1"), FindingKind.ORPHAN_EVENT)
    with write_session(engine) as session:
        _, token = add_operator(session, name="ada", role="finance", now=utcnow())
    where = _artefacts(tmp_path)
    settings = load_settings(database_url=database_url, insecure_cookies=True)
    with running_server(create_app(settings, engine=engine)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            problems = _watch(page)
            page.goto(f"{base}/console/findings", wait_until="load")
            page.get_by_label("Operator token").fill(token)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_load_state("load")
            page.goto(f"{base}/console/findings", wait_until="load")
            page.locator("select#kind").select_option("stale_pending")
            page.get_by_role("button", name="Filter").click()
            page.wait_for_load_state("load")
            assert f"Findings 1–{STORM} of {STORM}" in page.inner_text("#queue-total")
            page.get_by_role("link", name="largest amount at stake first").click()
            page.wait_for_load_state("load")
            assert "STORM-029" in page.locator("td[data-label=Reference]").first.inner_text()
            page.locator("summary", has_text="Work every finding matching these filters").click()
            page.get_by_label(f"Note for all {STORM}").fill("provider outage 09:00-10:00, all paid")
            _shoot(page, where, "bulk-confirm")
            page.get_by_role("button", name=f"Acknowledge all {STORM} matching").click()
            page.wait_for_load_state("load")
            assert "Every matching open finding was acknowledged." in page.inner_text(
                "[role=status]"
            )
            assert "0 findings" in page.inner_text("#queue-total")
            page.goto(f"{base}/console/findings?state=open", wait_until="load")
            assert "Findings 1–1 of 1" in page.inner_text("#queue-total")
            _shoot(page, where, "bulk-done")
            assert problems == []
        finally:
            browser.close()
    with read_session(engine) as session:
        acked = session.execute(
            select(func.count()).select_from(Finding).where(Finding.acknowledged_at.is_not(None))  # type: ignore[union-attr]
        ).scalar_one()
        audited = session.execute(
            select(func.count()).select_from(AuditEntry).where(AuditEntry.action == "finding.ack")  # type: ignore[arg-type]
        ).scalar_one()
    assert (acked, audited) == (STORM, STORM)
