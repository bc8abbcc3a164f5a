"""CSV and spreadsheet exports: one row per transfer, streamed, readable back."""

from __future__ import annotations

import csv
import datetime as dt
import io
import tracemalloc
from pathlib import Path

import openpyxl
from sqlalchemy import Engine

from ledger.db import read_session
from reconcile.reports.csvout import write_csv
from reconcile.reports.period import parse_period
from reconcile.reports.rows import COLUMNS, iter_transfer_rows
from reconcile.reports.summary import compute_report
from reconcile.reports.xlsx import NAIRA_FORMAT, write_xlsx
from tests.integration.reports.ledgers import UTC, Spec, bulk_insert, insert_ledger

START = dt.datetime(2025, 3, 1, 9, tzinfo=UTC)


class NullSink:
    """A text stream that counts what it is given and keeps none of it."""

    def __init__(self) -> None:
        self.chars = 0

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


def _ledger(engine: Engine) -> list[Spec]:
    specs = [
        Spec(
            "r1",
            "successful",
            START,
            100_000,
            1000,
            provider_amount=100_000,
            provider_fee=1075,
            confirmed=True,
            findings=[("fee_mismatch", "open"), ("amount_mismatch", "resolved")],
        ),
        Spec(
            "r2",
            "failed",
            START + dt.timedelta(hours=20),
            50_000,
            1000,
            webhook_amount=50_000,
            webhook_fee=2500,
            findings=[("status_conflict", "acknowledged")],
        ),
        Spec("r3", "pending", START + dt.timedelta(days=1), None, None),
    ]
    insert_ledger(engine, specs)
    return specs


def test_csv_has_one_row_per_transfer_with_its_findings(engine: Engine) -> None:
    """Every transfer is a row with counted figures in kobo and its findings' states."""
    _ledger(engine)
    out = io.StringIO()
    with read_session(engine) as session:
        written = write_csv(iter_transfer_rows(session), out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert written == 3
    assert tuple(rows[0]) == COLUMNS
    by_ref = {row["reference"]: row for row in rows}
    assert by_ref["r1"]["amount"] == "100000" and by_ref["r1"]["fee"] == "1075"
    assert by_ref["r1"]["quoted_fee"] == "1000"
    assert by_ref["r1"]["findings"] == "amount_mismatch:resolved; fee_mismatch:open"
    assert by_ref["r2"]["fee"] == "2500" and by_ref["r2"]["provider_fee"] == ""
    assert by_ref["r2"]["findings"] == "status_conflict:acknowledged"
    assert by_ref["r2"]["lagos_date"] == "2025-03-02"  # 05:00 UTC next day
    assert by_ref["r3"]["amount"] == "0" and by_ref["r3"]["findings"] == ""
    assert by_ref["r1"]["confirmed"] == "yes" and by_ref["r3"]["confirmed"] == "no"


def test_csv_respects_the_period(engine: Engine) -> None:
    """Only transfers created on the period's Lagos days are exported."""
    _ledger(engine)
    out = io.StringIO()
    with read_session(engine) as session:
        write_csv(iter_transfer_rows(session, parse_period("2025-03-02", None)), out)
    references = [row["reference"] for row in csv.DictReader(io.StringIO(out.getvalue()))]
    assert references == ["r2", "r3"]


def _peak_while_exporting(engine: Engine) -> tuple[int, int]:
    sink = NullSink()
    tracemalloc.start()
    try:
        with read_session(engine) as session:
            count = write_csv(iter_transfer_rows(session, batch=500), sink)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.chars > 0
    return count, peak


def test_csv_export_memory_stays_flat_while_the_ledger_grows_tenfold(engine: Engine) -> None:
    """Peak memory of a CSV export of 20,000 transfers stays near that of 2,000."""
    bulk_insert(engine, 2_000, START, prefix="small")
    _peak_while_exporting(engine)  # warm caches (compiled SQL, type processors)
    small_count, small_peak = _peak_while_exporting(engine)
    bulk_insert(engine, 18_000, START + dt.timedelta(days=1), prefix="large")
    large_count, large_peak = _peak_while_exporting(engine)
    assert (small_count, large_count) == (2_000, 20_000)
    # Holding every row would multiply the peak by ten; streaming keeps it at a batch's worth.
    assert large_peak < small_peak * 2, (small_peak, large_peak)


def test_xlsx_opens_back_with_summary_and_transfers(engine: Engine, tmp_path: Path) -> None:
    """The workbook has its three sheets, naira-formatted numbers, frozen headers and every
    row."""
    _ledger(engine)
    path = tmp_path / "report.xlsx"
    with read_session(engine) as session:
        report = compute_report(session, None, now=START + dt.timedelta(days=2))
        written = write_xlsx(report, iter_transfer_rows(session), path)
    assert written == 3
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Summary", "Transfers", "Collections"]
    transfers = book["Transfers"]
    assert transfers.freeze_panes == "A2"
    header = [cell.value for cell in transfers[1]]
    assert header[0] == "Reference" and "Fee (NGN)" in header
    assert transfers.max_row == 4
    amount_col = header.index("Amount (NGN)") + 1
    fee_col = header.index("Fee (NGN)") + 1
    first = transfers.cell(row=2, column=amount_col)
    assert first.value == 1000.0 and first.number_format == NAIRA_FORMAT
    assert transfers.cell(row=2, column=fee_col).value == 10.75
    assert transfers.column_dimensions["A"].width >= 20
    summary = book["Summary"]
    labels = {row[0].value: row[1].value for row in summary.iter_rows(min_row=1) if row[0].value}
    # Wallet debit: 1,000.00 successful + 10.75 fee + 25.00 fee charged on the failure.
    assert labels["Wallet debit"] == 1035.75
    assert labels["Fees charged on failed transfers"] == 25.0


FORMULA = '=HYPERLINK("http://attacker.example","click")'


def test_exports_never_turn_ledger_text_into_formulas(engine: Engine, tmp_path: Path) -> None:
    """A reference that looks like a formula (a webhook can carry one) is text in both exports:
    the CSV cell starts with an apostrophe, the workbook cell is a string, not a formula."""
    insert_ledger(
        engine, [Spec(FORMULA, "pending", START, 100, 10), Spec("-5", "pending", START, 1, 1)]
    )
    out = io.StringIO()
    path = tmp_path / "report.xlsx"
    with read_session(engine) as session:
        write_csv(iter_transfer_rows(session), out)
        report = compute_report(session, None, now=START + dt.timedelta(days=1))
        write_xlsx(report, iter_transfer_rows(session), path)
    references = sorted(row["reference"] for row in csv.DictReader(io.StringIO(out.getvalue())))
    cells = [row[0] for row in openpyxl.load_workbook(path)["Transfers"].iter_rows(min_row=2)]
    assert references == ["'-5", "'" + FORMULA]
    assert sorted(cell.value for cell in cells) == ["-5", FORMULA]
    assert {cell.data_type for cell in cells} == {"s"}
