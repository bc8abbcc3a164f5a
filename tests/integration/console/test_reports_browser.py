"""Finance in headless Chromium: console → Reports → download CSV, XLSX and JSON, checked
against each other; the report pages readable at 420 px."""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from openpyxl import load_workbook
from sqlalchemy import Engine

from ledger.db import write_session
from ledger.operators import add_operator
from ledger.types import utcnow
from payrecon.app import create_app
from payrecon.settings import load_settings
from tests.integration.console.test_browser import _artefacts, _shoot, _watch
from tests.integration.reports.ledgers import Spec, insert_ledger
from tests.integration.reports.test_browser import CHROMIUM, CHROMIUM_ARGS, _require_browser
from tests.support.servers import running_server

OPEN = 130  # more open findings than the report page lists (100)


def _seed(engine: Engine) -> str:
    """Today's transfers of every status (some with open findings, one reference that looks
    like a formula); a finance operator's token."""
    now = utcnow() - dt.timedelta(minutes=5)
    specs = [
        Spec(
            f"RPT-{n:04d}",
            ("successful", "failed", "pending", "successful")[n % 4],
            now - dt.timedelta(seconds=n),
            100_000 + n * 1_001,
            1_075,
            provider_amount=100_000 + n * 1_001 if n % 4 == 0 else None,
            provider_fee=1_000 if n % 4 == 0 else None,
            webhook_fee=0 if n % 4 == 1 else None,
            confirmed=n % 4 == 0,
            findings=[("fee_mismatch", "open")] if n < OPEN else [],
        )
        for n in range(160)
    ]
    specs.append(Spec("=HYPERLINK(1)", "successful", now, 5_000, 0))
    insert_ledger(engine, specs)
    with write_session(engine) as session:
        _, token = add_operator(session, name="fola", role="finance", now=utcnow())
    return token


def _kobo(naira: float | None) -> int:
    return 0 if naira is None else round(naira * 100)


def _by_status(rows: list[tuple[str, int, int]]) -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"count": 0, "amount": 0, "fee": 0})
    for status, amount, fee in rows:
        totals[status]["count"] += 1
        totals[status]["amount"] += amount
        totals[status]["fee"] += fee
    return dict(totals)


def _download(page: Any, label: str, where: Path) -> Path:
    with page.expect_download() as info:
        page.get_by_role("link", name=label).click()
    download = info.value
    target = where / download.suggested_filename
    download.save_as(target)
    return target


def test_finance_downloads_csv_and_xlsx_from_the_console(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    """Sign in, open Reports from the menu, download CSV, XLSX and JSON of this month: the
    spreadsheet's and the CSV's totals per status equal the JSON's; both report pages fit 420 px
    and the report page lists 100 of the open findings with a link to the queue."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    token = _seed(engine)
    where = _artefacts(tmp_path)
    settings = load_settings(
        database_url=database_url, admin_token="admin-token-0123456789", insecure_cookies=True
    )
    with running_server(create_app(settings, engine=engine)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": 1400, "height": 900}, accept_downloads=True
            )
            page = context.new_page()
            problems = _watch(page)
            page.goto(f"{base}/console", wait_until="load")
            page.get_by_label("Operator token").fill(token)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{base}/console")
            page.get_by_role("navigation", name="Console").get_by_role(
                "link", name="Reports"
            ).click()
            page.wait_for_load_state("load")
            assert page.url.startswith(f"{base}/console/reports")
            _shoot(page, where, "reports")

            csv_path = _download(page, "Download CSV", where)
            xlsx_path = _download(page, "Download XLSX", where)
            json_path = _download(page, "Download JSON", where)
            assert csv_path.name.startswith("payrecon-report-") and csv_path.suffix == ".csv"
            assert xlsx_path.suffix == ".xlsx" and json_path.suffix == ".json"

            page.get_by_role("link", name="Open the full report page for this period").click()
            page.wait_for_load_state("load")
            text = page.inner_text("body")
            assert f"Open findings ({OPEN})" in text
            assert f"Showing the first 100; {OPEN - 100} more in the findings queue" in text
            _shoot(page, where, "report-page")
            page.get_by_role("link", name="Reports in the console").click()
            page.wait_for_load_state("load")
            assert page.url.startswith(f"{base}/console/reports")
            assert problems == []
        finally:
            browser.close()

    summary = json.loads(json_path.read_text(encoding="utf-8"))
    expected = {
        status: {k: figures[k] for k in ("count", "amount", "fee")}
        for status, figures in summary["transfers"]["by_status"].items()
        if figures["count"]
    }
    with csv_path.open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["type"] == "transfer"]
    assert _by_status([(r["status"], int(r["amount"]), int(r["fee"])) for r in rows]) == expected
    assert "'=HYPERLINK(1)" in {r["reference"] for r in rows}  # inert in a spreadsheet

    book = load_workbook(xlsx_path, read_only=True)
    sheet = list(book["Transfers"].iter_rows(values_only=True))
    header = list(sheet[0])
    status, amount, fee = (
        header.index("Status"),
        header.index("Amount (NGN)"),
        header.index("Fee (NGN)"),
    )
    cells = [(r[status], _kobo(r[amount]), _kobo(r[fee])) for r in sheet[1:]]
    assert _by_status(cells) == expected
    assert "=HYPERLINK(1)" in {r[0] for r in sheet[1:]}
    # A failed transfer whose webhook said no fee was charged counts none anywhere.
    assert expected["failed"]["fee"] == 0
