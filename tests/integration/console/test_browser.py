"""The console in headless Chromium: a finance operator works the day's exceptions."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from ledger.db import read_session, write_session
from ledger.models import AuditEntry, Finding
from ledger.operators import add_operator
from ledger.types import FindingKind, utcnow
from payrecon.app import create_app
from payrecon.settings import load_settings
from reconcile.poller import run_pass
from tests.integration.console.seed import FakeProvider, finding, transaction, transfer
from tests.integration.reports.test_browser import CHROMIUM, CHROMIUM_ARGS, _require_browser
from tests.support.servers import running_server

WIDTHS = (1400, 420)
PAGES = ("overview", "transfers", "transfer", "findings", "endpoints", "audit")


def _artefacts(tmp_path: Path) -> Path:
    """Where screenshots go: ARTEFACTS_DIR when set (kept after the run), else tmp."""
    where = Path(os.environ.get("ARTEFACTS_DIR") or tmp_path) / "console"
    where.mkdir(parents=True, exist_ok=True)
    return where


def _seed(engine: Engine, database_url: str) -> tuple[str, list[int]]:
    """Two transfers with findings and provider checks; a finance operator's token."""
    now = utcnow()
    first = transfer(engine, "INV-2026-0042", amount=1_250_000, provider_reference="PRV-77A")
    hostile = transfer(engine, '<script>alert("ref")</script>' + "R" * 70)
    ids = [
        finding(engine, first, FindingKind.STATUS_CONFLICT, "webhook failed, provider successful"),
        finding(engine, first, FindingKind.CONFLICTING_DELIVERY, "amount 1250000 kobo vs 1 kobo"),
        finding(engine, hostile, FindingKind.ORPHAN_EVENT, "<img src=x onerror=alert(1)>"),
    ]
    provider = FakeProvider(
        {
            "PRV-77A": transaction(
                "INV-2026-0042", amount=1_200_000, fee=5000, status="successful"
            ),
            hostile_ref(engine, hostile): transaction(
                "x", amount=1, fee=0, status="failed", failure_reason="<b>bank said no</b>"
            ),
        }
    )
    settings = load_settings(database_url=database_url, provider_max_rps=0)
    asyncio.run(run_pass(engine, provider, settings, now=now + dt.timedelta(minutes=5)))
    with write_session(engine) as session:
        _, token = add_operator(session, name="ada", role="finance", now=now)
    return token, ids


def hostile_ref(engine: Engine, transfer_id: int) -> str:
    """The reference of a transfer by id."""
    from ledger.models import Transfer

    with read_session(engine) as session:
        row = session.get(Transfer, transfer_id)
        assert row is not None
        return row.reference


def _watch(page: Any) -> list[str]:
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    return problems


def _shoot(page: Any, where: Path, name: str) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(where / f"{name}-{width}.png"), full_page=True)
        # Nothing may stick out sideways at either width (tables scroll or reflow instead).
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} at {width}px is {overflow}px too wide"
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})


def test_finance_operator_works_the_days_exceptions(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    """Log in, find a transfer by the provider's reference, read its timeline, acknowledge two
    findings with one note, assign one, log out: no console error, every page screenshotted."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    token, ids = _seed(engine, database_url)
    where = _artefacts(tmp_path)
    settings = load_settings(
        database_url=database_url, admin_token="admin-token-0123456789", insecure_cookies=True
    )
    with running_server(create_app(settings, engine=engine)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTHS[0], "height": 900})
            problems = _watch(page)
            page.goto(f"{base}/console", wait_until="load")
            assert "/console/login" in page.url
            page.get_by_label("Operator token").fill(token)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{base}/console")
            assert "ada (finance)" in page.inner_text("header")
            _shoot(page, where, "overview")

            page.get_by_role("navigation", name="Console").get_by_role(
                "link", name="Transfers"
            ).click()
            page.get_by_label("Reference (yours or the provider's)").fill("PRV-77A")
            page.get_by_role("button", name="Search").click()
            page.wait_for_load_state("load")
            _shoot(page, where, "transfers")
            page.get_by_role("link", name="INV-2026-0042").click()
            page.wait_for_load_state("load")
            timeline = page.inner_text("ol.timeline")
            assert "provider check: successful (HTTP 200)" in timeline
            assert "status_conflict opened" in timeline and "amount_mismatch opened" in timeline
            _shoot(page, where, "transfer")

            page.get_by_role("navigation", name="Console").get_by_role(
                "link", name="Findings"
            ).click()
            page.wait_for_load_state("load")
            page.get_by_label(f"Tick finding {ids[0]}").check()
            page.get_by_label(f"Tick finding {ids[1]}").check()
            page.get_by_label("Acknowledge the ticked findings").fill("refund agreed with bank")
            page.get_by_role("button", name="Acknowledge ticked").click()
            page.wait_for_load_state("load")
            assert "Findings acknowledged." in page.inner_text("[role=status]")
            page.get_by_label(f"Assign finding {ids[2]} to").fill("ada")
            page.locator(f"form[action='/console/findings/{ids[2]}/assign'] button").click()
            page.wait_for_load_state("load")
            assert "Assignment saved." in page.inner_text("[role=status]")
            assert '<script>alert("ref")</script>' in page.inner_text("main")
            _shoot(page, where, "findings")
            page.goto(f"{base}/console/endpoints", wait_until="load")
            _shoot(page, where, "endpoints")

            page.get_by_role("button", name="Log out").click()
            page.wait_for_load_state("load")
            page.goto(f"{base}/console/findings", wait_until="load")
            assert "/console/login" in page.url
            # The admin sees exactly who did what.
            page.get_by_label("Operator token").fill("admin-token-0123456789")
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_load_state("load")
            page.goto(f"{base}/console/audit?operator=ada", wait_until="load")
            audit_text = page.inner_text("main table")
            assert audit_text.count("finding.ack") == 2 and "finding.assign" in audit_text
            _shoot(page, where, "audit")
            page.get_by_role("button", name="Log out").click()
            page.wait_for_load_state("load")
            assert problems == []
        finally:
            browser.close()
    with read_session(engine) as session:
        states = {
            f.id: (f.acknowledged_at is not None, f.assignee)
            for f in session.execute(select(Finding)).scalars()
        }
        actions = [
            (a.operator, a.action)
            for a in session.execute(select(AuditEntry).order_by(AuditEntry.id)).scalars()  # type: ignore[arg-type]
        ]
    assert {i: states[i] for i in ids} == {
        ids[0]: (True, None),
        ids[1]: (True, None),
        ids[2]: (False, "ada"),
    }
    assert [a for a in actions if a[0] == "ada"] == [
        ("ada", "login"),
        ("ada", "finding.ack"),
        ("ada", "finding.ack"),
        ("ada", "finding.assign"),
        ("ada", "logout"),
    ]
    assert sorted(p.name for p in where.glob("*.png")) == sorted(
        f"{name}-{width}.png" for name in PAGES for width in WIDTHS
    )
