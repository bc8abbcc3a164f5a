"""`payrecon report` and `payrecon findings` as a user runs them (click's CliRunner)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import openpyxl
import pytest
from sqlalchemy import Engine, select

from ledger.db import read_session
from ledger.models import Finding
from ledger.types import utcnow
from reconcile.reports.summary import build_summary
from tests.integration.reports.ledgers import UTC, Spec, insert_ledger
from tests.support.cli import run_cli

START = dt.datetime(2025, 3, 1, 9, tzinfo=UTC)


def _ledger(engine: Engine) -> None:
    insert_ledger(
        engine,
        [
            Spec(
                "big",
                "successful",
                START,
                123_456_789,
                5000,
                provider_amount=123_456_789,
                provider_fee=5375,
                confirmed=True,
                findings=[("fee_mismatch", "open")],
            ),
            Spec(
                "fail",
                "failed",
                START + dt.timedelta(days=1),
                250_000,
                1000,
                webhook_amount=250_000,
                webhook_fee=1000,
            ),
            Spec("wait", "pending", START + dt.timedelta(days=1), 990_000, 2500),
        ],
    )


def test_json_report_equals_the_summary(engine: Engine, database_url: str) -> None:
    """`--format json` prints exactly the summary dict for the same period."""
    _ledger(engine)
    result = run_cli(database_url, "report", "--format", "json", "--since", "2025-03-01")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    with read_session(engine) as session:
        from reconcile.reports.period import parse_period

        expected = build_summary(session, parse_period("2025-03-01", None))
    assert printed == expected
    assert printed["wallet_debit"] == 123_456_789 + 5375 + 1000


def test_text_report_shows_naira_totals(engine: Engine, database_url: str) -> None:
    """The default text format shows the wallet debit and fees in naira with separators."""
    _ledger(engine)
    result = run_cli(database_url, "report")
    assert result.exit_code == 0, result.output
    assert "₦1,234,567.89" in result.stdout  # successful amount
    assert "₦1,234,631.64" in result.stdout  # wallet debit: 1,234,567.89 + 53.75 + 10.00
    assert "Fees charged on failed transfers" in result.stdout
    assert "fee_mismatch" in result.stdout


def test_csv_report_goes_to_stdout_or_a_file(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    """CSV prints to stdout without --output and writes the same rows into --output FILE."""
    _ledger(engine)
    printed = run_cli(database_url, "report", "--format", "csv")
    assert printed.exit_code == 0, printed.output
    rows = list(csv.DictReader(io.StringIO(printed.stdout)))
    assert [row["reference"] for row in rows] == ["big", "fail", "wait"]
    target = tmp_path / "out.csv"
    written = run_cli(database_url, "report", "--format", "csv", "--output", str(target))
    assert written.exit_code == 0, written.output
    assert target.read_text("utf-8").replace("\r\n", "\n") == printed.stdout.replace("\r\n", "\n")


def test_html_and_xlsx_reports_are_written_to_files(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    """--output FILE writes a self-contained HTML page and a workbook."""
    _ledger(engine)
    page = tmp_path / "report.html"
    book = tmp_path / "report.xlsx"
    assert run_cli(database_url, "report", "--format", "html", "--output", str(page)).exit_code == 0
    assert run_cli(database_url, "report", "--format", "xlsx", "--output", str(book)).exit_code == 0
    html = page.read_text("utf-8")
    assert "₦1,234,631.64" in html and "<svg" in html
    assert openpyxl.load_workbook(book).sheetnames == ["Summary", "Transfers", "Collections"]


def test_xlsx_without_output_is_a_usage_error(engine: Engine, database_url: str) -> None:
    """A workbook is not text: xlsx to stdout exits 2 with one line."""
    result = run_cli(database_url, "report", "--format", "xlsx")
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "--output" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--since", "2025-13-01"],
        ["--until", "yesterday"],
        ["--since", "2025-03-02", "--until", "2025-03-01"],
    ],
)
def test_bad_dates_exit_2_with_one_line(engine: Engine, database_url: str, args: list[str]) -> None:
    """An invalid day or a reversed period exits 2 with a single clear line."""
    result = run_cli(database_url, "report", *args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("payrecon: --")


def test_findings_list_and_ack(engine: Engine, database_url: str) -> None:
    """`findings list --open --json` shows the finding; `ack` marks it and it stays listed."""
    _ledger(engine)
    listed = run_cli(database_url, "findings", "list", "--open", "--json")
    assert listed.exit_code == 0, listed.output
    items = json.loads(listed.stdout)
    assert [(i["kind"], i["reference"]) for i in items] == [("fee_mismatch", "big")]
    finding_id = items[0]["id"]
    acked = run_cli(database_url, "findings", "ack", str(finding_id), "--note", "refund claimed")
    assert acked.exit_code == 0, acked.output
    with read_session(engine) as session:
        finding = session.execute(select(Finding).where(Finding.id == finding_id)).scalar_one()
    assert finding.ack_note == "refund claimed"
    assert finding.acknowledged_at is not None and finding.acknowledged_at <= utcnow()
    again = json.loads(run_cli(database_url, "findings", "list", "--open", "--json").stdout)
    assert again[0]["ack_note"] == "refund claimed"
    table = run_cli(database_url, "findings", "list", "--kind", "fee_mismatch")
    assert "acknowledged:" in table.stdout and "refund" in table.stdout
    assert run_cli(database_url, "findings", "list", "--kind", "orphan_event").stdout.strip() == (
        "no findings"
    )


def test_findings_ack_refuses_unknown_ids_and_missing_notes(
    engine: Engine, database_url: str
) -> None:
    """An unknown id exits 1 with one line; a missing, blank or unstorable note exits 2."""
    unknown = run_cli(database_url, "findings", "ack", "999", "--note", "x")
    assert unknown.exit_code == 1
    assert unknown.stderr.strip() == "payrecon: no finding with id 999"
    assert run_cli(database_url, "findings", "ack", "1").exit_code == 2
    assert run_cli(database_url, "findings", "ack", "1", "--note", "  ").exit_code == 2
    # A byte that is not UTF-8 reaches Python as a lone surrogate: it was a traceback.
    bad = run_cli(database_url, "findings", "ack", "1", "--note", "bad\udcff")
    assert bad.exit_code == 2 and "--note" in bad.stderr and "Traceback" not in bad.stderr
    assert run_cli(database_url, "findings", "list", "--kind", "nonsense").exit_code == 2
