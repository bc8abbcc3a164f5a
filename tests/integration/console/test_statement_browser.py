"""Month-end in headless Chromium: a finance operator confirms a suggestion, ignores a bank
charge with its reason, ties out the month, checks the CSV download against the JSON, and
closes and locks the period; every page readable at 420 px."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from sqlalchemy import Engine, select
from sqlmodel import Session, col

from ledger.db import write_session
from ledger.models import AuditEntry, PeriodLock, StatementLine
from ledger.operators import add_operator
from ledger.types import utcnow
from payrecon.app import create_app
from payrecon.settings import load_settings
from tests.integration.console.statement_seed import seed_statement
from tests.integration.console.test_browser import WIDTHS, _shoot, _watch
from tests.integration.reports.test_browser import CHROMIUM, CHROMIUM_ARGS, _require_browser
from tests.support.servers import running_server

PAGES = ("statements", "suggested", "periods", "locked")


def test_finance_operator_works_the_statement_and_closes_the_month(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    """Confirm, ignore with a reason, tie out, download CSV (equal to the JSON), close and
    lock: each banner shown, each change audited, no console error, no page too wide."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    ids = seed_statement(engine, tmp_path)
    with write_session(engine) as session:
        _, token = add_operator(session, name="ada", role="finance", now=utcnow())
    # Apart from the other console test's screenshots: it counts its own folder's.
    where = Path(os.environ.get("ARTEFACTS_DIR") or tmp_path) / "console-statements"
    where.mkdir(parents=True, exist_ok=True)
    settings = load_settings(
        database_url=database_url, admin_token="admin-token-0123456789", insecure_cookies=True
    )
    with running_server(create_app(settings, engine=engine)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                accept_downloads=True, viewport={"width": WIDTHS[0], "height": 900}
            )
            page = context.new_page()
            problems = _watch(page)
            page.goto(f"{base}/console/statements", wait_until="load")
            page.get_by_label("Operator token").fill(token)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{base}/console/statements")
            assert "wallet-november.csv" in page.inner_text("main")
            _shoot(page, where, "statements")

            page.get_by_role("navigation", name="Line states").get_by_role(
                "link", name="Suggested (1)"
            ).click()
            page.wait_for_load_state("load")
            row = page.locator(f"#line-{ids['suggested']}")
            assert "inv-1003" in row.inner_text()
            _shoot(page, where, "suggested")
            page.get_by_role("button", name=f"Confirm line {ids['suggested']}'s suggestion").click()
            page.wait_for_load_state("load")
            assert "Suggestion confirmed" in page.inner_text("[role=status]")

            page.get_by_role("navigation", name="Line states").get_by_role(
                "link", name="Unmatched (2)"
            ).click()
            page.wait_for_load_state("load")
            page.get_by_label(f"Ignore line {ids['charge']} as").select_option("charge")
            page.locator(f"#why-{ids['charge']}").fill("SMS alert charges, bank tariff")
            page.locator(
                f"form[action='/console/statements/lines/{ids['charge']}/ignore'] button"
            ).click()
            page.wait_for_load_state("load")
            assert "Line ignored with its reason." in page.inner_text("[role=status]")
            assert f"line-{ids['charge']}" not in page.content()

            page.get_by_role("navigation", name="Console").get_by_role(
                "link", name="Periods"
            ).click()
            page.wait_for_load_state("load")
            page.get_by_label("Account").select_option("provider-wallet")
            page.get_by_label("From (Lagos day)").fill("2026-11-01")
            page.get_by_label("To (Lagos day, included)").fill("2026-11-30")
            page.get_by_role("button", name="Tie out").click()
            page.wait_for_load_state("load")
            verdict = page.inner_text("#verdict")
            assert "tie out" in verdict
            _shoot(page, where, "periods")
            with page.expect_download() as csv_download:
                page.get_by_role("link", name="CSV").click()
            with page.expect_download() as json_download:
                page.get_by_role("link", name="JSON").click()
            rows = list(csv.reader(io.StringIO(Path(csv_download.value.path()).read_text("utf-8"))))
            tie = json.loads(Path(json_download.value.path()).read_text("utf-8"))
            figures = {row[1]: row[2] for row in rows if row and row[0] == "figures"}
            for key in ("opening_balance", "closing_balance", "credits", "debits", "residual"):
                assert int(figures[key]) == tie[key], key
            assert figures["tied_out"] == str(tie["tied_out"])
            listed = [int(row[1]) for row in rows if row and row[0] == "unmatched_lines"]
            assert listed == [line["id"] for line in tie["unmatched_lines"]]
            assert ids["charge"] not in listed  # ignored, explained
            assert (tie["tied_out"] and "ties out" in verdict) or (
                not tie["tied_out"] and "does not tie out" in verdict
            )

            page.get_by_role("button", name="Close and lock").click()
            page.wait_for_load_state("load")
            assert "Period closed and locked" in page.inner_text("[role=status]")
            assert "by ada" in page.inner_text("main")
            _shoot(page, where, "locked")
            page.get_by_role("button", name="Log out").click()
            page.wait_for_load_state("load")
            assert problems == []
        finally:
            browser.close()
    with Session(engine) as session:
        confirmed = session.get(StatementLine, ids["suggested"])
        charge = session.get(StatementLine, ids["charge"])
        locks = session.execute(select(PeriodLock)).scalars().all()
        actions = [
            row.action
            for row in session.execute(select(AuditEntry).order_by(col(AuditEntry.id))).scalars()
            if row.operator == "ada"
        ]
    assert confirmed is not None and (confirmed.state, confirmed.matched_by) == ("matched", "ada")
    assert charge is not None and (charge.state, charge.ignored_as) == ("ignored", "charge")
    assert charge.note == "SMS alert charges, bank tariff"
    assert [(lock.since.isoformat(), lock.until.isoformat()) for lock in locks] == [
        ("2026-11-01", "2026-11-30")
    ]
    assert actions == ["login", "statement.match", "statement.ignore", "period.close", "logout"]
    assert sorted(p.name for p in where.glob("*.png")) == sorted(
        f"{name}-{width}.png" for name in PAGES for width in WIDTHS
    )
