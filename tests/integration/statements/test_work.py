"""Working lines by hand, the period tie-out and its lock, and matching in the reconcile
pass, on both databases."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from sqlalchemy import Engine, select, update
from sqlmodel import Session

from ledger.models import PeriodLock, StatementLine, Transfer
from reconcile.statements.passes import match_statements
from tests.integration.statements.ledger_rows import (
    DAY2,
    SAMPLE,
    add_transfer,
    sample_ledger,
    write_csv,
)
from tests.support.cli import run_cli

MONTH = ("--since", "2026-11-01", "--until", "2026-11-30")


def _import(database_url: str, path: Path) -> dict:  # type: ignore[type-arg]
    result = run_cli(
        database_url, "statement", "import", str(path), "--mapping", "sandbox", "--json"
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _line(engine: Engine, line_id: int) -> StatementLine:
    with Session(engine) as session:
        line = session.get(StatementLine, line_id)
        assert line is not None
        return line


def test_hand_match_refusals_say_why(database_url: str, engine: Engine) -> None:
    """Matching a matched line, a credit to a payout's debit slot, an unknown reference or a
    far-off amount is refused with exit 2 and the line is unchanged."""
    sample_ledger(engine)
    with Session(engine) as session:
        add_transfer(session, "BIG-1", None, 90_000_000, 0, "successful")
        session.commit()
    _import(database_url, SAMPLE)
    cases = [
        (("2", "--transfer", "inv-1001"), "already matched"),
        (("1", "--transfer", "nope"), "no transfer"),
        (("1", "--collection", "order-77"), "order-77"),
        (("1", "--transfer", "BIG-1"), "further apart than its fee"),
        (("1", "--transfer", "inv-1001", "--line", "2"), "exactly one"),
    ]
    for args, words in cases:
        result = run_cli(database_url, "statement", "match", *args)
        assert result.exit_code == 2, (args, result.output)
        assert words in result.stderr, (args, result.stderr)
    assert _line(engine, 1).state == "unmatched"


def test_ignore_unmatch_and_their_audit(database_url: str, engine: Engine) -> None:
    """An ignored funding keeps its type and note; unmatching a matched line leaves it
    unmatched through a reconcile pass; each change is audited with before and after."""
    sample_ledger(engine)
    _import(database_url, SAMPLE)
    ignored = run_cli(
        database_url, "statement", "ignore", "1", "--as", "funding", "--note", "top-up"
    )
    assert ignored.exit_code == 0, ignored.output
    assert (_line(engine, 1).state, _line(engine, 1).ignored_as) == ("ignored", "funding")
    assert (
        run_cli(database_url, "statement", "ignore", "1", "--as", "x", "--note", "n").exit_code == 2
    )
    assert run_cli(database_url, "statement", "unmatch", "2").exit_code == 0
    match_statements(engine, object(), now=dt.datetime.now(dt.UTC))
    assert (_line(engine, 2).state, _line(engine, 2).transfer_id) == ("unmatched", None)
    assert run_cli(database_url, "statement", "unmatch", "2").exit_code == 2
    with Session(engine) as session:
        from ledger.models import AuditEntry

        rows = session.execute(select(AuditEntry).order_by(AuditEntry.id)).scalars().all()
    assert [row.action for row in rows] == [
        "statement.import",
        "statement.ignore",
        "statement.unmatch",
    ]
    detail = json.loads(rows[2].detail or "{}")
    assert (detail["before"]["state"], detail["after"]["state"]) == ("matched", "unmatched")


def test_the_tie_out_agrees_with_an_independent_computation(
    database_url: str, engine: Engine
) -> None:
    """The sample month: statement movement from the balances, ledger movement from the
    ledger's own figures, the funding the one unexplained line; once it is ignored as a
    funding the period ties out to the kobo."""
    sample_ledger(engine)
    _import(database_url, SAMPLE)
    result = run_cli(
        database_url, "period", "close", "--account", "provider-wallet", *MONTH, "--format", "json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # By hand: opening ₦1,000,000.00, closing ₦1,536,728.50; the ledger moved −(12,500 +
    # 10.75) − (250,000 + 10.75) + 250,000 (refund) + (50,000 − 750) naira.
    ledger = -(1_250_000 + 1075) - (25_000_000 + 1075) + 25_000_000 + (5_000_000 - 75_000)
    assert (data["opening_balance"], data["closing_balance"]) == (100_000_000, 153_672_850)
    assert data["statement_movement"] == 153_672_850 - 100_000_000
    assert data["ledger_movement"] == ledger
    assert data["residual"] == 50_000_000  # the funding
    assert [line["id"] for line in data["unmatched_lines"]] == [1]
    assert data["matched"] == {
        "count": 6,
        "amount": 1_250_000 + 1075 + 4_925_000 + 25_000_000 + 1075 + 25_000_000,
    }
    assert data["tied_out"] is False
    run_cli(database_url, "statement", "ignore", "1", "--as", "funding", "--note", "top-up")
    text = run_cli(database_url, "period", "close", "--account", "provider-wallet", *MONTH)
    assert "The period ties out to the kobo." in text.stdout


def test_every_format_of_the_tie_out_is_written(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """CSV, HTML and XLSX carry the lists; the HTML says the sentence; xlsx needs --output."""
    from openpyxl import load_workbook

    sample_ledger(engine)
    _import(database_url, SAMPLE)
    base = ("period", "close", "--account", "provider-wallet", *MONTH)
    html = run_cli(database_url, *base, "--format", "html")
    assert "does not tie out" in html.stdout and "FND_8C1D2E3F4A5B6C7D" in html.stdout
    csv_text = run_cli(database_url, *base, "--format", "csv").stdout
    assert "unmatched_lines,1," in csv_text
    assert run_cli(database_url, *base, "--format", "xlsx").exit_code == 2
    out = tmp_path / "t.xlsx"
    assert run_cli(database_url, *base, "--format", "xlsx", "--output", str(out)).exit_code == 0
    assert load_workbook(out).sheetnames == [
        "Summary",
        "Unmatched lines",
        "Missing from statement",
        "Mismatches",
        "Balance gaps",
    ]


def test_a_locked_period_records_an_import_that_touches_it(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """--lock stores the tie-out; a later import adding a line of that period is recorded
    against the lock; an unknown account is exit 2."""
    rows = SAMPLE.read_text().splitlines()[1:]
    _import(database_url, write_csv(tmp_path / "a.csv", rows[:3]))
    locked = run_cli(
        database_url, "period", "close", "--account", "provider-wallet",
        "--since", "2026-11-02", "--until", "2026-11-02", "--lock", "--format", "json",
    )  # fmt: skip
    assert locked.exit_code == 0, locked.output
    with Session(engine) as session:
        lock = session.execute(select(PeriodLock)).scalar_one()
    assert json.loads(lock.snapshot) == json.loads(locked.stdout)
    later = write_csv(
        tmp_path / "b.csv",
        [*rows[:3], '2026-11-02,2026-11-02,X-1,late line,1.00,,"1,487,488.25"', *rows[3:4]],
    )
    summary = _import(database_url, later)
    assert summary["new"] == 2
    assert summary["locked_periods"] == [
        {"lock": lock.id, "since": "2026-11-02", "until": "2026-11-02"}
    ]
    missing = run_cli(database_url, "period", "close", "--account", "nobody", *MONTH)
    assert missing.exit_code == 2


def test_the_reconcile_pass_matches_a_credit_once_the_transfer_is_final(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """A refund credit for a transfer still pending stays unmatched; once the ledger holds
    the transfer failed, the next pass matches it as the refund."""
    with Session(engine) as session:
        add_transfer(session, "PEND-1", "TRF_AAAABBBBCCCC", 300_000, 0, "pending", DAY2)
        session.commit()
    path = write_csv(
        tmp_path / "r.csv", ['2026-11-03,,TRF_AAAABBBBCCCC,Refund,,"3,000.00","3,000.00"']
    )
    assert _import(database_url, path)["unmatched"] == 1
    with Session(engine) as session:
        session.execute(update(Transfer).values(status="failed", confirmed=True))
        session.commit()
    counts = match_statements(engine, object(), now=dt.datetime.now(dt.UTC))
    assert counts["matched"] == 1
    line = _line(engine, 1)
    assert (line.state, line.role, line.matched_by) == ("matched", "refund", "payrecon")
