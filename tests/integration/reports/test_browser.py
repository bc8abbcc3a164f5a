"""The served report page in headless Chromium: no console errors, totals on screen, forms work."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from ledger.db import read_session
from ledger.models import Finding
from reconcile.reports.naira import naira
from tests.integration.reports.ledgers import UTC, Spec, expected_figures, insert_ledger
from tests.integration.reports.pages import report_app
from tests.support.servers import running_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START = dt.datetime(2025, 3, 1, 7, tzinfo=UTC)


def _require_browser() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("PAYRECON_REQUIRE_BROWSER") == "1":
        pytest.fail("PAYRECON_REQUIRE_BROWSER=1 but /usr/bin/chromium is missing")
    pytest.skip("headless browser test needs Debian's chromium at /usr/bin/chromium")


def demo_specs() -> list[Spec]:
    """A week of payouts with every kind of figure and a few findings (also for the screenshot)."""
    specs: list[Spec] = []
    for day in range(7):
        for n in range(6 + day):
            created = START + dt.timedelta(days=day, minutes=37 * n)
            amount = 1_500_000 + 250_000 * ((day * 7 + n) % 9)
            status = "failed" if n % 7 == 3 else "successful"
            spec = Spec(
                f"pay-{day}-{n}",
                status,
                created,
                amount,
                1075,
                confirmed=True,
                provider_amount=amount,
                provider_fee=1075,
            )
            if n == 5:
                spec.provider_fee = 5375
                spec.findings.append(("fee_mismatch", "open"))
            specs.append(spec)
    # One large payout: the volume chart's y-axis label is then ₦2,563,178.90, wide.
    big = START + dt.timedelta(days=4, hours=3)
    specs.append(Spec("big-1", "successful", big, 234_567_890, 5375, confirmed=True))
    specs.append(
        Spec(
            "stuck-1",
            "pending",
            START + dt.timedelta(days=6, hours=2),
            4_000_000,
            2500,
            findings=[("stale_pending", "open")],
        )
    )
    specs.append(
        Spec(
            "orphan-1",
            "successful",
            START + dt.timedelta(days=3),
            None,
            None,
            webhook_amount=700_000,
            webhook_fee=1075,
            findings=[("orphan_event", "acknowledged")],
        )
    )
    return specs


def open_page(page: Any, url: str) -> list[str]:
    """Load `url`; every console error and failed request seen while it loaded."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.goto(url, wait_until="load")
    return problems


def test_report_page_renders_totals_without_console_errors(engine: Engine, tmp_path: Path) -> None:
    """Chromium shows the naira totals, logs no errors, and acknowledging through the form works."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    specs = demo_specs()
    insert_ledger(engine, specs)
    want = expected_figures(specs)
    shot = tmp_path / "report.png"
    with running_server(report_app(engine)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            problems = open_page(page, f"{base}/reports")
            text = page.inner_text("body")
            page.screenshot(path=str(shot), full_page=True)
            assert page.locator("svg.chart").count() == 3
            # Acknowledge the first open finding through its form, as finance would.
            form = page.locator("form.ack").first
            form.locator("input[name=note]").fill("claimed back from provider")
            form.locator("button").click()
            page.wait_for_load_state("load")
            after = page.inner_text("body")
            final_url = page.url
        finally:
            browser.close()
    assert problems == []
    assert naira(want["wallet_debit"]) in text
    assert naira(want["fees_total"]) in text
    assert naira(want["by_status"]["successful"]["amount"]) in text
    assert "stuck-1" in text and "Stale pending" in text
    assert shot.stat().st_size > 20_000
    assert final_url.endswith("/reports")
    assert "claimed back from provider" in after
    with read_session(engine) as session:
        notes = list(session.execute(select(Finding.ack_note)).scalars())  # type: ignore[call-overload]
    assert "claimed back from provider" in notes


def test_period_form_narrows_the_report(engine: Engine) -> None:
    """Picking one day in the form reloads the page with that day's totals only."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    specs = demo_specs()
    insert_ledger(engine, specs)
    day = dt.date(2025, 3, 2)
    want = expected_figures([s for s in specs if s.lagos_date == day])
    with running_server(report_app(engine)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            problems = open_page(page, f"{base}/reports")
            page.fill("input[name=since]", day.isoformat())
            page.fill("input[name=until]", day.isoformat())
            page.click("form.period button")
            page.wait_for_url("**/reports?since=2025-03-02&until=2025-03-02")
            text = page.inner_text("body")
        finally:
            browser.close()
    assert problems == []
    assert naira(want["wallet_debit"]) in text
    assert "2025-03-02 to 2025-03-02" in text


LAYOUT_PROBE = """() => {
  const svgText = [...document.querySelectorAll('svg.chart text.tick')].map(t => {
    const s = t.ownerSVGElement.getBoundingClientRect(), b = t.getBoundingClientRect();
    return {text: t.textContent, inside: b.left >= s.left && b.right <= s.right
            && b.top >= s.top && b.bottom <= s.bottom};
  });
  const forms = [...document.querySelectorAll('form.ack')].map(f => {
    const cell = f.closest('td');
    return {columns: document.querySelectorAll('table.findings thead th').length,
            span: cell.colSpan, rowHasDetail: cell.parentElement.cells.length > 1};
  });
  return {scrollWidth: document.documentElement.scrollWidth, innerWidth: innerWidth,
          ticks: svgText, forms: forms};
}"""


@pytest.mark.parametrize("width", [420, 1400])
def test_report_page_fits_a_phone_and_a_desktop(engine: Engine, tmp_path: Path, width: int) -> None:
    """No sideways page scroll, chart labels inside their charts, ack forms on rows of their own."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    insert_ledger(engine, demo_specs())
    with running_server(report_app(engine)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            problems = open_page(page, f"{base}/reports")
            page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=True)
            layout = page.evaluate(LAYOUT_PROBE)
        finally:
            browser.close()
    assert problems == []
    assert layout["scrollWidth"] <= layout["innerWidth"]
    # The first tick is the volume chart's y-axis peak, the widest label: ₦2,563,178.90.
    assert layout["ticks"][0]["text"] == naira(234_567_890 + 21_750_000)
    assert [t["text"] for t in layout["ticks"] if not t["inside"]] == []
    assert len(layout["forms"]) == 8  # every open, unacknowledged finding has its form
    for form in layout["forms"]:
        assert form["span"] == form["columns"] == 7
        assert not form["rowHasDetail"]
