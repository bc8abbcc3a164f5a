"""`payrecon demo` end to end, as a new user runs it."""

from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.processes import PAYRECON, payrecon_env


def _figure(summary: str, label: str) -> int:
    """The number on the summary table's row named `label`."""
    match = re.search(re.escape(label) + r"\W+(\d+)", summary)
    assert match is not None, summary
    return int(match[1])


def test_the_demo_pays_reconciles_and_reports(tmp_path: Path) -> None:
    """40 payouts and 8 collections end confirmed or flagged, the three reports agree with each
    other, and the demo consumer verified one relay event per confirmation and per finding."""
    result = subprocess.run(
        [*PAYRECON, "demo", "--transfers", "40"],
        cwd=tmp_path,
        env=payrecon_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    folder = tmp_path / "payrecon-demo"
    report = json.loads((folder / "report.json").read_text())
    with (folder / "report.csv").open(newline="") as handle:
        every_row = list(csv.DictReader(handle))
    rows = [r for r in every_row if r["type"] == "transfer"]
    collected = [r for r in every_row if r["type"] == "collection"]
    html = (folder / "report.html").read_text()
    by_status = report["transfers"]["by_status"]
    assert report["transfers"]["total"] == 40 == len(rows)
    assert by_status["failed"]["count"] == 1 and by_status["failed"]["fee"] > 0
    assert by_status["pending"]["count"] == 1
    assert report["findings"]["stale_pending"] == 1
    assert report["findings"]["fee_mismatch"] == 1
    assert report["fees"]["on_failed"] == by_status["failed"]["fee"]
    successful = [r for r in rows if r["status"] == "successful"]
    assert len(successful) == by_status["successful"]["count"] == 37
    # One success came back with its webhook dropped: found by re-verification (Reversals).
    [gone] = [r for r in rows if r["status"] == "reversed"]
    assert by_status["reversed"]["count"] == 1 and report["findings"]["reversed_after_success"] == 1
    assert by_status["reversed"]["amount"] == int(gone["amount"])
    assert report["wallet_debit"] == (by_status["successful"]["amount"] + report["fees"]["total"])
    assert f"{gone['reference']} (lookup)" in result.stdout
    assert "confirmed by the provider" in result.stdout
    # Collections: 4 paid exactly, 1 over, 1 under, 1 late, 1 never (it expires, failed).
    collections = report["collections"]
    assert collections["total"] == 8 == len(collected)
    assert collections["by_status"]["successful"]["count"] == 6
    assert collections["by_status"]["failed"]["count"] == 2
    assert report["findings"]["overpaid"] == 1 and report["findings"]["underpaid"] == 1
    assert report["findings"]["paid_after_expiry"] == 1
    paid = [r for r in collected if r["status"] == "successful"]
    assert sum(int(r["amount"]) for r in paid) == collections["received"]
    assert sum(int(r["fee"]) for r in paid) == collections["fees"]
    assert report["net_flow"] == (
        collections["received"] - collections["fees"] - report["wallet_debit"]
    )
    assert _figure(result.stdout, "collections confirmed by the provider") == 8
    # 39 + 8 final statuses confirmed, 1 reversal and 6 findings opened (3 transfers, 3
    # collections).
    assert _figure(result.stdout, "events delivered to the demo consumer") == 54
    assert _figure(result.stdout, "verified by the consumer (Standard Webhooks)") == 54
    assert _figure(result.stdout, "transfer.confirmed") == 39
    assert _figure(result.stdout, "collection.confirmed") == 8
    assert _figure(result.stdout, "finding.opened") == 6
    assert _figure(result.stdout, "transfer.reversed") == 1
    assert "₦" in html and "<script src=" not in html
    # The month end: the wallet statement's tie-out has one residual item, the fee drift
    # (the pending payout's debit is its movement, not a mismatch).
    assert "explained by 1 item." in result.stdout
    assert "payout_fee: the statement shows" in result.stdout


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("/proc/x", "cannot create it"),
        ("/proc", "cannot write there"),
        ("{tmp}/a-file/demo", "a file is in the way"),
    ],
    ids=["cannot-create", "not-writable", "file-in-the-way"],
)
def test_an_unusable_demo_directory_is_one_line_and_exit_2(
    tmp_path: Path, where: str, reason: str
) -> None:
    """A directory that cannot be created or written stops the demo with one line naming it."""
    (tmp_path / "a-file").write_text("in the way")
    directory = where.format(tmp=tmp_path)
    result = subprocess.run(
        [*PAYRECON, "demo", "--transfers", "10", "--directory", directory],
        cwd=tmp_path,
        env=payrecon_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"payrecon: cannot use {directory} as the demo directory: {reason}")
    assert "Traceback" not in result.stdout + result.stderr
