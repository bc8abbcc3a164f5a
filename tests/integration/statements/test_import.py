"""`statement import` through the CLI on both databases: storing, re-importing, invalid
files, dry runs, matching on import, balance gaps and refused files."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select, text
from sqlmodel import Session

from ledger import statistics
from ledger.db import create_db_engine
from ledger.models import AuditEntry, StatementImport, StatementLine
from tests.integration.statements.ledger_rows import SAMPLE, sample_ledger, write_csv
from tests.support.cli import run_cli


def _import(database_url: str, path: Path, *args: str, **env: str) -> dict:  # type: ignore[type-arg]
    result = run_cli(database_url, "statement", "import", str(path), *args, "--json", **env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _lines(engine: Engine) -> list[StatementLine]:
    with Session(engine) as session:
        return list(session.execute(select(StatementLine).order_by(StatementLine.id)).scalars())


def test_sample_is_stored_and_matched_by_reference(database_url: str, engine: Engine) -> None:
    """Each line of the sample naming a transfer or collection is matched with its role; the
    funding names nothing and stays unmatched."""
    sample_ledger(engine)
    summary = _import(database_url, SAMPLE, "--mapping", "sandbox")
    assert (summary["read"], summary["new"], summary["already_known"]) == (7, 7, 0)
    assert (summary["matched"], summary["suggested"], summary["unmatched"]) == (6, 0, 1)
    roles = [(line.state, line.role) for line in _lines(engine)]
    assert roles == [
        ("unmatched", None),
        ("matched", "payout_amount"),
        ("matched", "payout_fee"),
        ("matched", "collection_credit"),
        ("matched", "payout_amount"),
        ("matched", "payout_fee"),
        ("matched", "refund"),
    ]
    with Session(engine) as session:
        audit = session.execute(select(AuditEntry.action)).scalars().all()
    assert list(audit) == ["statement.import"]


def test_the_same_file_twice_stores_each_line_once(database_url: str, engine: Engine) -> None:
    """A second import of the same file finds every line already known and stores none."""
    _import(database_url, SAMPLE, "--mapping", "sandbox")
    again = _import(database_url, SAMPLE, "--mapping", "sandbox")
    assert (again["read"], again["new"], again["already_known"]) == (7, 0, 7)
    assert len(_lines(engine)) == 7


def test_overlapping_exports_store_each_movement_once(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """Days 2-3 then days 3-4 of the sample (day 3 in both) store the seven lines once."""
    rows = SAMPLE.read_text().splitlines()[1:]
    first = write_csv(tmp_path / "a.csv", rows[:6])
    second = write_csv(tmp_path / "b.csv", rows[3:])
    assert _import(database_url, second, "--mapping", "sandbox")["new"] == 4
    summary = _import(database_url, first, "--mapping", "sandbox")
    assert (summary["new"], summary["already_known"]) == (3, 3)
    assert sorted(line.file_line for line in _lines(engine)) == [2, 2, 3, 3, 4, 4, 5]


def test_an_invalid_line_stores_nothing_and_exits_2(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """Every invalid line is listed with its number and reason; exit 2; nothing stored."""
    rows = SAMPLE.read_text().splitlines()[1:]
    rows[1] = rows[1].replace('"12,500.00"', '"12.345"')
    rows[4] = rows[4].replace("2026-11-03", "2026-13-03", 1)
    path = write_csv(tmp_path / "bad.csv", rows)
    result = run_cli(database_url, "statement", "import", str(path), "--mapping", "sandbox")
    assert result.exit_code == 2, result.output
    assert "line 3:" in result.stderr and "line 6:" in result.stderr
    assert "2 invalid lines" in result.stderr
    assert _lines(engine) == []
    with Session(engine) as session:
        assert session.execute(select(func.count()).select_from(StatementImport)).scalar() == 0


def test_skip_invalid_stores_the_valid_lines(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """With --skip-invalid the valid lines are stored and the skipped one is listed."""
    rows = SAMPLE.read_text().splitlines()[1:]
    rows[2] = rows[2].replace("10.75", "ten")
    path = write_csv(tmp_path / "bad.csv", rows)
    summary = _import(database_url, path, "--mapping", "sandbox", "--skip-invalid")
    assert summary["new"] == 6
    assert [item["line"] for item in summary["invalid"]] == [4]
    assert len(_lines(engine)) == 6


def test_dry_run_stores_nothing(database_url: str, engine: Engine) -> None:
    """--dry-run reports what would be stored and matched, and stores nothing."""
    sample_ledger(engine)
    summary = _import(database_url, SAMPLE, "--mapping", "sandbox", "--dry-run")
    assert (summary["new"], summary["matched"], summary["dry_run"]) == (7, 6, True)
    assert _lines(engine) == []


def test_a_large_import_leaves_its_lines_counted_for_postgresqls_planner(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import storing ANALYZE_AFTER_ROWS lines or more runs ANALYZE before its commit (the
    planner counts them at once, not after autovacuum's next round); one storing fewer leaves
    the count as it was."""
    monkeypatch.setattr(statistics, "ANALYZE_AFTER_ROWS", 7)
    engine = create_db_engine(postgres_url)
    counted = text("SELECT reltuples FROM pg_class WHERE relname = 'statement_line'")

    def count() -> float:
        with Session(engine) as session:
            return float(session.execute(counted).scalar_one())

    try:
        assert count() == -1  # never counted
        _import(postgres_url, SAMPLE, "--mapping", "sandbox")
        assert count() == 7
        december = [row.replace("2026-11-", "2026-12-") for row in SAMPLE.read_text().splitlines()]
        fewer = write_csv(tmp_path / "december.csv", december[1:7])
        assert _import(postgres_url, fewer, "--mapping", "sandbox")["new"] == 6
        assert count() == 7
    finally:
        engine.dispose()


def test_a_balance_gap_is_recorded(database_url: str, engine: Engine, tmp_path: Path) -> None:
    """A line missing from the export is a break of the chain, recorded on the import."""
    rows = SAMPLE.read_text().splitlines()[1:]
    del rows[2]  # the ₦10.75 fee of inv-1001
    summary = _import(database_url, write_csv(tmp_path / "gap.csv", rows), "--mapping", "sandbox")
    assert summary["balance_breaks"] == [
        {"after_line": 3, "before_line": 4, "expected": 153675000, "stated": 153673925,
         "difference": -1075}
    ]  # fmt: skip
    with Session(engine) as session:
        stored = session.execute(select(StatementImport.balance_breaks)).scalar_one()
    assert json.loads(stored) == summary["balance_breaks"]


def test_an_unreferenced_line_is_suggested_never_matched(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """A debit naming nothing with exactly one payout of its amount is suggested; confirming
    it matches it."""
    from tests.integration.statements.ledger_rows import add_transfer

    with Session(engine) as session:
        add_transfer(session, "PAY-77", None, 700_000, 0, "successful")
        session.commit()
    path = write_csv(tmp_path / "s.csv", ['2026-11-02,,,ATM,"7,000.00",,"993,000.00"'])
    summary = _import(database_url, path, "--mapping", "sandbox")
    assert (summary["matched"], summary["suggested"]) == (0, 1)
    (line,) = _lines(engine)
    assert line.state == "suggested" and line.transfer_id is not None
    confirmed = run_cli(database_url, "statement", "match", str(line.id), "--transfer", "PAY-77")
    assert confirmed.exit_code == 0, confirmed.output
    (line,) = _lines(engine)
    assert (line.state, line.role, line.matched_by.startswith("cli")) == (
        "matched",
        "payout",
        True,
    )


def test_an_entity_bomb_is_refused_quickly(database_url: str, tmp_path: Path) -> None:
    """A CAMT.053 file declaring entities is refused with exit 2, in well under a second's
    worth of expansion."""
    from tests.unit.statements.test_camtformat import BILLION_LAUGHS

    path = tmp_path / "bomb.xml"
    path.write_bytes(BILLION_LAUGHS.replace(b"<Document", b"<!-- camt.053 --><Document"))
    started = time.monotonic()
    result = run_cli(database_url, "statement", "import", str(path))
    assert result.exit_code == 2, result.output
    assert time.monotonic() - started < 30
    assert "Traceback" not in result.output


def test_a_file_over_the_limit_is_refused_before_parsing(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """PAYRECON_STATEMENT_MAX_BYTES below the file's size: exit 2 naming the sizes."""
    path = tmp_path / "big.csv"
    path.write_bytes(SAMPLE.read_bytes() + b"x" * 2000)  # not even valid: never parsed
    result = run_cli(
        database_url,
        "statement",
        "import",
        str(path),
        "--mapping",
        "sandbox",
        PAYRECON_STATEMENT_MAX_BYTES="1024",
    )
    assert result.exit_code == 2
    assert "larger than the limit of 1024" in result.stderr
    assert _lines(engine) == []


def test_a_csv_without_mapping_or_with_another_kind_is_refused(
    database_url: str, engine: Engine
) -> None:
    """No mapping for a CSV, or an existing account named with the other kind: exit 2."""
    assert run_cli(database_url, "statement", "import", str(SAMPLE)).exit_code == 2
    _import(database_url, SAMPLE, "--mapping", "sandbox")
    other = run_cli(
        database_url, "statement", "import", str(SAMPLE), "--mapping", "sandbox", "--kind", "bank"
    )
    assert other.exit_code == 2 and "is a wallet account" in other.stderr
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM statement_line")).scalar() == 7
