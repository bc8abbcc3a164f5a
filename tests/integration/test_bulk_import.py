"""`transfer import` / `collection import` in batches: every bad row listed, nothing stored on
any problem, the one-registration rules for held and repeated references (both databases)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from ledger.db import read_session, write_session
from ledger.models import AuditEntry, Collection, Finding, Transfer
from payrecon import csvimport
from tests.support.cli import run_cli


def _count(engine: Engine, model: type) -> int:
    with read_session(engine) as session:
        return int(session.execute(select(func.count()).select_from(model)).scalar_one())


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Batches of 3 so a few rows cross batch boundaries.
    monkeypatch.setattr(csvimport, "BATCH", 3)


def test_every_bad_row_is_listed_and_nothing_stored(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """Three bad rows anywhere in the file: each named with its line, exit 2, nothing stored."""
    rows = ["reference,amount"] + [f"OK-{n},100" for n in range(10)]
    rows[3], rows[7], rows[10] = "BAD-1,-5", "BAD-2,1.5", "BAD-3,"
    csv_file = tmp_path / "bad.csv"
    csv_file.write_text("\n".join(rows) + "\n")
    result = run_cli(database_url, "transfer", "import", str(csv_file))
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2
    assert [line.split(": ")[1].rsplit(":", 1)[-1] for line in lines[:3]] == ["4", "8", "11"]
    assert lines[-1].endswith("3 bad rows; nothing imported")
    assert _count(engine, Transfer) == 0


def test_repeats_inside_the_file_and_the_ledger_follow_the_one_registration_rules(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """Identical repeats (in the file, or held already) are fine; the import is one audit row."""
    assert (
        run_cli(
            database_url, "transfer", "expect", "--reference", "R-4", "--amount", "400"
        ).exit_code
        == 0
    )
    csv_file = tmp_path / "good.csv"
    csv_file.write_text(
        "reference,amount,fee,provider_reference\n"
        "R-1,100,,P-1\nR-2,200,5,\nR-3,300,,\nR-4,400,,\nR-1,100,,P-1\nR-5,500,,\nR-6,600,,P-6\n"
    )
    first = run_cli(database_url, "transfer", "import", str(csv_file), "--json")
    again = run_cli(database_url, "transfer", "import", str(csv_file), "--json")
    assert json.loads(first.stdout) == {"rows": 7, "registered": 5, "already_registered": 2}
    assert json.loads(again.stdout) == {"rows": 7, "registered": 0, "already_registered": 7}
    with read_session(engine) as session:
        stored = {t.reference: t for t in session.execute(select(Transfer)).scalars()}
        audits = session.execute(select(AuditEntry.detail)).scalars().all()  # type: ignore[call-overload]
    assert sorted(stored) == ["R-1", "R-2", "R-3", "R-4", "R-5", "R-6"]
    assert (stored["R-2"].fee, stored["R-6"].provider_reference) == (5, "P-6")
    assert stored["R-5"].next_check_at is not None and stored["R-5"].status == "pending"
    assert audits.count("5 registered from good.csv") == 1


@pytest.mark.parametrize(
    "body",
    [
        "reference,amount\nC-1,100\nC-2,200\nC-3,300\nC-4,400\nC-2,999\n",  # repeat, different
        "reference,amount,provider_reference\nC-1,100,\nC-2,200,\nC-3,300,\nC-4,400,C-1\n",
        "reference,amount\nC-1,100\nC-2,200\nC-3,300\nC-4,400\nHELD,1\n",  # held, different
    ],
)
def test_a_conflict_in_a_later_batch_imports_nothing(
    database_url: str, engine: Engine, tmp_path: Path, body: str
) -> None:
    """A conflict after earlier batches were inserted rolls the whole import back (exit 1)."""
    assert (
        run_cli(
            database_url, "transfer", "expect", "--reference", "HELD", "--amount", "7"
        ).exit_code
        == 0
    )
    csv_file = tmp_path / "clash.csv"
    csv_file.write_text(body)
    result = run_cli(database_url, "transfer", "import", str(csv_file))
    assert result.exit_code == 1
    assert "clash.csv:" in result.stderr and "nothing imported" in result.stderr
    assert _count(engine, Transfer) == 1


def test_an_orphans_registration_in_an_import_resolves_its_finding(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """A reference first heard of in a webhook is matched, not inserted twice."""
    with write_session(engine) as session:
        session.add(
            Transfer(reference="ORPH", origin="webhook", status="successful", webhook_amount=900)
        )
        session.flush()
        orphan = session.execute(select(Transfer)).scalar_one()
        session.add(
            Finding(subject="transfer", subject_id=orphan.id, kind="orphan_event", detail="orphan")
        )
    csv_file = tmp_path / "orphan.csv"
    csv_file.write_text("reference,amount\nNEW-1,1\nNEW-2,2\nNEW-3,3\nORPH,900\n")
    result = run_cli(database_url, "transfer", "import", str(csv_file), "--json")
    assert json.loads(result.stdout)["registered"] == 3
    with read_session(engine) as session:
        held = session.execute(select(Transfer).where(Transfer.reference == "ORPH")).scalar_one()  # type: ignore[arg-type]
        finding = session.execute(select(Finding)).scalar_one()
    assert (held.origin, held.amount) == ("expected", 900)
    assert finding.resolved_at is not None


def test_collections_import_in_batches_and_repeat(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """Collections go in by batches too; an identical second import registers none."""
    csv_file = tmp_path / "collections.csv"
    lines = ["reference,amount,expires_at"] + [
        f"COL-{n},{100 + n},2026-12-01T00:00:00Z" for n in range(8)
    ]
    csv_file.write_text("\n".join(lines) + "\n")
    first = run_cli(database_url, "collection", "import", str(csv_file), "--json")
    again = run_cli(database_url, "collection", "import", str(csv_file), "--json")
    assert json.loads(first.stdout) == {"rows": 8, "registered": 8, "already_registered": 0}
    assert json.loads(again.stdout) == {"rows": 8, "registered": 0, "already_registered": 8}
    with read_session(engine) as session:
        amounts = sorted(session.execute(select(Collection.amount)).scalars().all())  # type: ignore[call-overload]
    assert amounts == [100 + n for n in range(8)]
