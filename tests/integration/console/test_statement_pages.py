"""The statements and periods pages over HTTP on a real server: what each role sees, bad
query parameters answered 4xx (never a 500), downloads equal to the JSON, a matched line in
its transfer's timeline."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openpyxl import load_workbook
from sqlalchemy import Engine

from ledger.db import write_session
from ledger.operators import add_operator
from ledger.types import utcnow
from tests.integration.console.statement_seed import seed_statement
from tests.support.apps import ADMIN, StartReceiver

AUTH = {"authorization": f"Bearer {ADMIN}"}
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
NOVEMBER = {"account": "provider-wallet", "since": "2026-11-01", "until": "2026-11-30"}


@pytest.fixture
def served(
    engine: Engine, start_receiver: StartReceiver, tmp_path: Path
) -> Iterator[tuple[str, dict[str, int], dict[str, dict[str, str]]]]:
    """A receiver over a ledger with an imported wallet statement; a header per role."""
    ids = seed_statement(engine, tmp_path)
    headers = {"admin": AUTH}
    with write_session(engine) as session:
        for name, role in (("vera", "viewer"), ("finn", "finance")):
            _, token = add_operator(session, name=name, role=role, now=utcnow())
            headers[role] = {"authorization": f"Bearer {token}"}
    with start_receiver(admin_token=ADMIN, insecure_cookies=True) as url:
        yield url, ids, headers


def test_statements_page_shows_accounts_imports_and_lines_by_state(
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """The wallet with its counts, its import, each state's lines with the total in naira;
    the hostile narration escaped; the menu links both pages."""
    url, ids, headers = served
    page = httpx.get(f"{url}/console/statements", headers=headers["viewer"])
    assert page.status_code == 200, page.text[:300]
    text = page.text
    assert "provider-wallet" in text and "wallet-november.csv" in text
    assert 'href="/console/statements"' in text and 'href="/console/periods"' in text
    assert "&lt;b&gt;SMS charges&lt;/b&gt;" in text and "<b>SMS" not in text
    assert "WAT" in text
    assert f'id="line-{ids["charge"]}"' in text
    assert "₦40.00" in text
    suggested = httpx.get(
        f"{url}/console/statements", params={"state": "suggested"}, headers=headers["viewer"]
    ).text
    assert f'id="line-{ids["suggested"]}"' in suggested and "inv-1003" in suggested
    assert "1 suggested line, ₦7,500.00 in all." in suggested
    matched = httpx.get(
        f"{url}/console/statements", params={"state": "matched"}, headers=headers["viewer"]
    ).text
    assert "TRF_D7731322DE471BE7" in matched and 'href="/console/transfers/inv-1001"' in matched


def test_statement_and_period_pages_answer_bad_parameters_with_4xx(
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """Bad days, a reversed range, an unknown state, account or format, a huge or forged
    cursor, NUL and an overlong name: a 400 or 404 page saying what is wrong, never a 500."""
    url, _, headers = served
    huge = "c2w6OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OQ"  # "sl:" and 29 nines
    cases = [
        ("/console/statements", {"since": "2026-13-01"}, 400),
        ("/console/statements", {"until": "yesterday"}, 400),
        ("/console/statements", {"since": "2026-11-30", "until": "2026-11-01"}, 400),
        ("/console/statements", {"state": "<script>"}, 400),
        ("/console/statements", {"account": "nope"}, 404),
        ("/console/statements", {"account": "a\x00b"}, 400),
        ("/console/statements", {"account": "x" * 500}, 400),
        ("/console/statements", {"cursor": huge}, 400),
        ("/console/statements", {"cursor": "!!!"}, 400),
        ("/console/statements", {"since": "0001-01-02"}, 400),
        ("/console/periods", {**NOVEMBER, "since": "2026-02-30"}, 400),
        ("/console/periods", {**NOVEMBER, "until": "9999-12-31"}, 400),
        ("/console/periods", {**NOVEMBER, "account": "nope"}, 404),
        ("/console/periods", {**NOVEMBER, "since": "2026-12-01"}, 400),
        ("/console/periods/download", {**NOVEMBER, "format": "exe"}, 400),
        ("/console/periods/download", {"format": "csv"}, 400),
        ("/console/periods/download", {**NOVEMBER, "account": "nope", "format": "csv"}, 404),
    ]
    for path, params, status in cases:
        answer = httpx.get(f"{url}{path}", params=params, headers=headers["viewer"])
        assert answer.status_code == status, (path, params, answer.status_code)
        assert 'role="alert"' in answer.text and "<script>" not in answer.text, (path, params)


def test_periods_page_ties_out_and_downloads_agree_with_the_json(
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """The sentence, the figures and the lists; the CSV, XLSX and HTML downloads carry the
    JSON's figures; a viewer reads it all but gets no close form."""
    url, ids, headers = served
    page = httpx.get(f"{url}/console/periods", params=NOVEMBER, headers=headers["viewer"])
    assert page.status_code == 200
    assert "does not tie out" in page.text and "Unmatched lines" in page.text
    assert "Close period" not in page.text
    download = f"{url}/console/periods/download"
    data = httpx.get(download, params={**NOVEMBER, "format": "json"}, headers=headers["viewer"])
    assert data.status_code == 200 and "attachment" in data.headers["content-disposition"]
    tie = data.json()
    assert tie["tied_out"] is False and tie["account"] == "provider-wallet"
    assert {line["id"] for line in tie["unmatched_lines"]} >= {ids["charge"], ids["suggested"]} - {
        ids["suggested"]
    }
    sheet = httpx.get(download, params={**NOVEMBER, "format": "csv"}, headers=headers["viewer"])
    rows = list(csv.reader(io.StringIO(sheet.text)))
    figures = {row[1]: row[2] for row in rows if row and row[0] == "figures"}
    for key in ("opening_balance", "closing_balance", "credits", "debits", "residual"):
        assert int(figures[key]) == tie[key], key
        assert _naira(tie[key]) in page.text, key
    unmatched = [row for row in rows if row and row[0] == "unmatched_lines"]
    assert len(unmatched) == len(tie["unmatched_lines"])
    book = httpx.get(download, params={**NOVEMBER, "format": "xlsx"}, headers=headers["viewer"])
    workbook = load_workbook(io.BytesIO(book.content))
    assert "Summary" in workbook.sheetnames and "Unmatched lines" in workbook.sheetnames
    html_file = httpx.get(
        download, params={**NOVEMBER, "format": "html"}, headers=headers["viewer"]
    )
    assert "does not tie out" in html_file.text
    assert "default-src 'none'" in html_file.headers["content-security-policy"]
    assert json.loads(data.text) == tie


def _naira(kobo: int) -> str:
    whole, part = divmod(abs(kobo), 100)
    return f"{'-' if kobo < 0 else ''}₦{whole:,}.{part:02d}"


def test_a_matched_line_is_in_its_transfers_timeline(
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """inv-1001's amount and fee lines appear in its timeline, with the account and day."""
    url, _, headers = served
    page = httpx.get(f"{url}/console/transfers/inv-1001", headers=headers["viewer"]).text
    assert page.count("provider-wallet 2026-11-02") == 2, page
    assert "statement line" in page and "payout_fee" in page
    collection = httpx.get(f"{url}/console/collections/order-77", headers=headers["viewer"]).text
    assert "provider-wallet 2026-11-03" in collection
