"""The console's Reports page and its report files over a real server: roles, formats, periods."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Iterator

import httpx
import pytest
from openpyxl import load_workbook
from sqlalchemy import Engine

from ledger.db import read_session, write_session
from ledger.operators import add_operator
from ledger.types import utcnow
from reconcile.reports.period import parse_period
from reconcile.reports.summary import build_summary
from tests.integration.reports.ledgers import UTC, Spec, insert_ledger
from tests.support.apps import ADMIN, StartReceiver, bearer

START = dt.datetime(2025, 3, 1, 9, tzinfo=UTC)
PERIOD = "since=2025-03-01&until=2025-03-02"
TYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html; charset=utf-8",
    "json": "application/json",
}


def _seed(engine: Engine) -> dict[str, str]:
    """Three transfers over three days (one failed, one with a formula-like reference) and an
    operator of each role; their tokens."""
    insert_ledger(
        engine,
        [
            Spec(
                "rf-1",
                "successful",
                START,
                500_000,
                1000,
                provider_amount=500_000,
                provider_fee=1075,
                confirmed=True,
                findings=[("fee_mismatch", "open")],
            ),
            Spec("=rf-2", "failed", START + dt.timedelta(days=1), 80_000, 1000, webhook_fee=0),
            Spec("rf-3", "successful", START + dt.timedelta(days=5), 7_000, 500),
        ],
    )
    tokens = {}
    with write_session(engine) as session:
        for name, role in (("vera", "viewer"), ("finn", "finance")):
            _, tokens[role] = add_operator(session, name=name, role=role, now=utcnow())
    tokens["admin"] = ADMIN
    return tokens


@pytest.fixture
def served(engine: Engine, start_receiver: StartReceiver) -> Iterator[tuple[str, dict[str, str]]]:
    """A receiver over the seeded ledger; its URL and the tokens by role."""
    tokens = _seed(engine)
    with start_receiver(admin_token=ADMIN, insecure_cookies=True) as url:
        yield url, tokens


def test_each_format_downloads_as_an_attachment_with_its_type(
    served: tuple[str, dict[str, str]], engine: Engine
) -> None:
    """Finance gets CSV, XLSX, HTML and JSON of the period, each an attachment with the right
    content type and file name; the files hold the period's transfers only."""
    url, tokens = served
    files = {}
    for fmt, media in TYPES.items():
        answer = httpx.get(
            f"{url}/console/reports/download?format={fmt}&{PERIOD}",
            headers=bearer(tokens["finance"]),
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == media
        assert answer.headers["content-disposition"] == (
            f'attachment; filename="payrecon-report-2025-03-01-to-2025-03-02.{fmt}"'
        )
        assert answer.headers["x-content-type-options"] == "nosniff"
        files[fmt] = answer.content
    rows = list(csv.DictReader(io.StringIO(files["csv"].decode())))
    assert sorted(r["reference"] for r in rows) == ["'=rf-2", "rf-1"]
    with read_session(engine) as session:
        expected = build_summary(session, parse_period("2025-03-01", "2025-03-02"))
    got = json.loads(files["json"])
    assert got["transfers"] == expected["transfers"]
    assert got["period"] == {"since": "2025-03-01", "until": "2025-03-02"}
    book = load_workbook(io.BytesIO(files["xlsx"]), read_only=True)
    references = [r[0] for r in book["Transfers"].iter_rows(min_row=2, values_only=True)]
    assert sorted(references) == ["=rf-2", "rf-1"]
    assert b"Finance report" in files["html"] and b"<script" not in files["html"]


def test_whole_ledger_file_is_named_start_to_now(served: tuple[str, dict[str, str]]) -> None:
    """Without a period the file covers the whole ledger and its name says so."""
    url, tokens = served
    answer = httpx.get(
        f"{url}/console/reports/download?format=csv", headers=bearer(tokens["admin"])
    )
    assert answer.status_code == 200
    assert "payrecon-report-start-to-now.csv" in answer.headers["content-disposition"]
    assert len(list(csv.DictReader(io.StringIO(answer.text)))) == 3


def test_viewer_sees_figures_but_no_downloads(served: tuple[str, dict[str, str]]) -> None:
    """A viewer reads the Reports page without download links and is refused a file (403)."""
    url, tokens = served
    page = httpx.get(f"{url}/console/reports?{PERIOD}", headers=bearer(tokens["viewer"]))
    assert page.status_code == 200
    assert "₦5,010.75" in page.text  # wallet debit: 5,000 + 10.75; the failed one charged none
    assert "/console/reports/download" not in page.text
    assert "needs the finance or admin role" in page.text
    refused = httpx.get(
        f"{url}/console/reports/download?format=csv", headers=bearer(tokens["viewer"])
    )
    assert refused.status_code == 403
    for role in ("finance", "admin"):
        page = httpx.get(f"{url}/console/reports?{PERIOD}", headers=bearer(tokens[role]))
        for fmt in TYPES:
            assert (
                f"/console/reports/download?format={fmt}&amp;{PERIOD.replace('&', '&amp;')}"
                in page.text
            )


def test_page_defaults_to_this_month_and_has_the_menu_entry(
    served: tuple[str, dict[str, str]],
) -> None:
    """Without a period the page shows this month so far (Lagos) and the menu links Reports."""
    url, tokens = served
    page = httpx.get(f"{url}/console/reports", headers=bearer(tokens["viewer"]))
    today = (utcnow() + dt.timedelta(hours=1)).date()
    assert page.status_code == 200
    assert f'name="since" value="{today.replace(day=1).isoformat()}"' in page.text
    assert f'name="until" value="{today.isoformat()}"' in page.text
    assert '<a href="/console/reports" aria-current="page">Reports</a>' in page.text
    overview = httpx.get(f"{url}/console", headers=bearer(tokens["viewer"]))
    assert '<a href="/console/reports">Reports</a>' in overview.text


@pytest.mark.parametrize(
    "query",
    [
        "format=csv&since=2025-02-30",
        "format=csv&since=2025-03-05&until=2025-03-01",
        "format=csv&until=03/01/2025",
        "format=pdf",
        "format=",
        "",
        "format=csv&since=" + "9" * 5000,
        "format=%00csv",
    ],
)
def test_bad_download_parameters_are_400(served: tuple[str, dict[str, str]], query: str) -> None:
    """A malformed, reversed or hostile period or format is a 400, never a file or a 500."""
    url, tokens = served
    answer = httpx.get(f"{url}/console/reports/download?{query}", headers=bearer(tokens["finance"]))
    assert answer.status_code == 400
    assert "attachment" not in answer.headers.get("content-disposition", "")


def test_bad_page_period_is_400(served: tuple[str, dict[str, str]]) -> None:
    """The Reports page refuses an impossible period with a 400 page."""
    url, tokens = served
    answer = httpx.get(f"{url}/console/reports?since=2025-13-01", headers=bearer(tokens["viewer"]))
    assert answer.status_code == 400
    assert "since must be a day" in answer.text.lower()


def test_reports_format_redirects_to_the_download(served: tuple[str, dict[str, str]]) -> None:
    """`/reports?format=csv` is a 303 to the console download of the same period; following it
    gives the CSV; an unknown format is a 400."""
    url, tokens = served
    answer = httpx.get(f"{url}/reports?format=csv&{PERIOD}", headers=bearer(tokens["finance"]))
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/console/reports/download?format=csv&{PERIOD}"
    followed = httpx.get(
        f"{url}/reports?format=csv&{PERIOD}",
        headers=bearer(tokens["finance"]),
        follow_redirects=True,
    )
    assert followed.headers["content-type"] == TYPES["csv"]
    assert followed.text.startswith("type,reference,")
    bad = httpx.get(f"{url}/reports?format=pdf", headers=bearer(tokens["finance"]))
    assert bad.status_code == 400


def test_reports_page_links_to_the_console_and_back(served: tuple[str, dict[str, str]]) -> None:
    """The served report page links to the console and its Reports page for the same period;
    the console page links to the full report of the period."""
    url, tokens = served
    page = httpx.get(
        f"{url}/reports?{PERIOD}", headers={**bearer(tokens["viewer"]), "accept": "text/html"}
    )
    assert '<a href="/console">Console</a>' in page.text
    assert f'href="/console/reports?{PERIOD.replace("&", "&amp;")}"' in page.text
    console = httpx.get(f"{url}/console/reports?{PERIOD}", headers=bearer(tokens["viewer"]))
    assert f'href="/reports?{PERIOD.replace("&", "&amp;")}"' in console.text
