"""Reversed transfers in reports (PRODUCT.md: Reversals): their own `by_status` line in every
format, and only their fee in `wallet_debit` (the amount came back)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import openpyxl
from click.testing import CliRunner
from sqlalchemy import Engine

from payrecon.cli import cli
from tests.integration.reports.ledgers import UTC, Spec, insert_ledger

START = dt.datetime(2025, 5, 2, 9, tzinfo=UTC)


def _specs() -> list[Spec]:
    def confirmed(ref: str, status: str, amount: int, fee: int, hours: int) -> Spec:
        return Spec(
            ref,
            status,
            START + dt.timedelta(hours=hours),
            amount,
            fee,
            provider_amount=amount,
            provider_fee=fee,
            confirmed=True,
        )

    return [
        confirmed("ok-1", "successful", 400_000, 2_500, 0),
        confirmed("ok-2", "successful", 90_000, 1_000, 1),
        confirmed("gone-1", "reversed", 250_000, 2_500, 2),
        confirmed("gone-2", "reversed", 70_000, 1_000, 3),
        confirmed("bad-1", "failed", 30_000, 500, 4),
        Spec("wait-1", "pending", START + dt.timedelta(hours=5), 10_000, 100),
    ]


def _run(engine: Engine, *args: str) -> str:
    url = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(cli, ["report", *args], env={"PAYRECON_DATABASE_URL": url})
    assert result.exit_code == 0, result.output
    return result.output


def test_reversed_transfers_in_every_report_format(engine: Engine, tmp_path: Path) -> None:
    """JSON: `by_status.reversed` and `wallet_debit` as summed here from the specs; text,
    HTML, CSV and XLSX show the reversed line and the reversed transfers."""
    specs = _specs()
    insert_ledger(engine, specs)
    by = {s: [x for x in specs if x.status == s] for s in ("successful", "failed", "reversed")}
    reversed_totals = {
        "count": len(by["reversed"]),
        "amount": sum(x.moved for x in by["reversed"]),
        "fee": sum(x.charged for x in by["reversed"]),
        "unconfirmed": 0,
    }
    charged = sum(x.charged for status in by for x in by[status])
    expected_debit = sum(x.moved for x in by["successful"]) + charged

    summary = json.loads(_run(engine, "--format", "json"))
    assert (
        summary["transfers"]["by_status"]["reversed"]
        == reversed_totals
        == {
            "count": 2,
            "amount": 320_000,
            "fee": 3_500,
            "unconfirmed": 0,
        }
    )
    assert summary["wallet_debit"] == expected_debit == 490_000 + 7_500
    assert summary["fees"]["total"] == charged and summary["fees"]["on_reversed"] == 3_500
    assert summary["transfers"]["total"] == len(specs)
    # Collections keep the provider's three statuses.
    assert sorted(summary["collections"]["by_status"]) == ["failed", "pending", "successful"]

    text = _run(engine, "--format", "text")
    assert "reversed" in text and "Fees on reversed transfers" in text

    html = tmp_path / "r.html"
    _run(engine, "--format", "html", "--output", str(html))
    assert ">reversed<" in html.read_text().replace(" ", "")

    rows = list(csv.DictReader(io.StringIO(_run(engine, "--format", "csv"))))
    assert sorted(r["reference"] for r in rows if r["status"] == "reversed") == [
        "gone-1",
        "gone-2",
    ]

    book = tmp_path / "r.xlsx"
    _run(engine, "--format", "xlsx", "--output", str(book))
    cells = [
        str(value)
        for sheet in openpyxl.load_workbook(book, read_only=True).worksheets
        for row in sheet.iter_rows(values_only=True)
        for value in row
        if value is not None
    ]
    assert "reversed" in cells and "Fees on reversed transfers" in cells
