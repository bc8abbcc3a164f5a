"""Collections in the finance report: the same figures in JSON, CSV, HTML and XLSX."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import openpyxl
from sqlalchemy import Engine, insert

from ledger.db import write_session
from ledger.models import Collection, Finding
from tests.integration.reports.ledgers import UTC, Spec, insert_ledger
from tests.support.cli import run_cli

START = dt.datetime(2025, 3, 1, 9, tzinfo=UTC)


def _collection(number: int, status: str, **values: object) -> dict[str, object]:
    return {
        "reference": f"COL-{number}",
        "provider_reference": f"COL_P{number}",
        "origin": "initiated",
        "status": status,
        "confirmed": status != "pending",
        "amount": 1_000_000,
        "fee": 10_000,
        "final_check_done": False,
        "check_attempts": 0,
        "not_found_count": 0,
        "event_sequence": 0,
        "created_at": START + dt.timedelta(minutes=number),
        "updated_at": START,
        **values,
    }


def _ledger(engine: Engine) -> None:
    """One paid-out transfer (wallet debit ₦1,010.00) and five collections."""
    insert_ledger(
        engine,
        [
            Spec(
                "T-1",
                "successful",
                START,
                100_000,
                1_000,
                provider_amount=100_000,
                provider_fee=1_000,
                confirmed=True,
            )
        ],
    )
    rows = [
        _collection(1, "successful", amount_paid=1_000_000, provider_fee=10_000),
        _collection(2, "successful", amount_paid=1_200_000, provider_fee=12_000),
        _collection(3, "failed", amount_paid=400_000, failure_reason="Underpaid"),
        _collection(4, "failed", failure_reason="Collection expired"),
        _collection(5, "pending"),
    ]
    with write_session(engine) as session:
        session.execute(insert(Collection), rows)
        session.execute(
            insert(Finding),
            [
                {
                    "subject": "collection",
                    "subject_id": 2,
                    "kind": "overpaid",
                    "detail": "expected 1000000 kobo; paid 1200000 kobo",
                    "opened_at": START,
                    "updated_at": START,
                }
            ],
        )


# Received 1,000,000 + 1,200,000; fees 10,000 + 12,000; wallet debit 100,000 + 1,000.
RECEIVED, FEES, DEBIT = 2_200_000, 22_000, 101_000
NET = RECEIVED - FEES - DEBIT


def test_json_has_the_collections_block_and_net_flow(database_url: str, engine: Engine) -> None:
    """`report --format json` counts collections by status, received, fees and net flow."""
    _ledger(engine)
    got = json.loads(run_cli(database_url, "report", "--format", "json").stdout)
    assert got["collections"] == {
        "total": 5,
        "by_status": {
            "successful": {"count": 2, "amount": RECEIVED, "fee": FEES},
            "failed": {"count": 2, "amount": 1_400_000, "fee": 0},
            "pending": {"count": 1, "amount": 1_000_000, "fee": 10_000},
        },
        "received": RECEIVED,
        "fees": FEES,
    }
    assert got["wallet_debit"] == DEBIT and got["net_flow"] == NET == 2_077_000
    assert got["findings"]["overpaid"] == 1
    overpaid = [f for f in got["open_findings"] if f["kind"] == "overpaid"]
    assert overpaid[0]["subject"] == "collection" and overpaid[0]["reference"] == "COL-2"


def test_csv_has_a_type_column_and_a_row_per_collection(database_url: str, engine: Engine) -> None:
    """The CSV lists the transfer then each collection, `type` telling them apart; the
    collection rows add up to the JSON's figures."""
    _ledger(engine)
    rows = list(
        csv.DictReader(io.StringIO(run_cli(database_url, "report", "--format", "csv").stdout))
    )
    kinds = [row["type"] for row in rows]
    collections = [row for row in rows if row["type"] == "collection"]
    successful = [row for row in collections if row["status"] == "successful"]
    assert kinds == ["transfer"] + ["collection"] * 5
    assert sum(int(row["amount"]) for row in successful) == RECEIVED
    assert sum(int(row["fee"]) for row in successful) == FEES
    assert collections[1]["findings"] == "overpaid:open"
    assert collections[1]["expected_amount"] == "1000000"


def test_html_and_xlsx_show_the_same_figures(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """The HTML page and the spreadsheet show received, fees and net flow as the JSON does."""
    _ledger(engine)
    page, book = tmp_path / "r.html", tmp_path / "r.xlsx"
    assert run_cli(database_url, "report", "--format", "html", "--output", str(page)).exit_code == 0
    assert run_cli(database_url, "report", "--format", "xlsx", "--output", str(book)).exit_code == 0
    text = run_cli(database_url, "report").stdout
    html = page.read_text("utf-8")
    assert "Collections by status" in html
    assert "₦22,000.00" in html and "₦220.00" in html and "₦20,770.00" in html
    assert "Net flow" in text and "₦20,770.00" in text
    workbook = openpyxl.load_workbook(book)
    labels = {
        row[0].value: row[1].value
        for row in workbook["Summary"].iter_rows(min_row=1)
        if row[0].value
    }
    assert labels["Collections received"] == 22_000.0
    assert labels["Collection fees"] == 220.0
    assert labels["Net flow"] == 20_770.0
    sheet = workbook["Collections"]
    assert sheet.max_row == 6
    assert [sheet.cell(row=r, column=1).value for r in range(2, 7)] == [
        f"COL-{n}" for n in range(1, 6)
    ]
