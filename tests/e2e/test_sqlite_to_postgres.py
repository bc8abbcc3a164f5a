"""The SQLite → PostgreSQL move of docs/operations.md §9, its commands run as printed."""

from __future__ import annotations

import ast
import shlex
import subprocess
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import func, select

from ledger.db import create_db_engine
from ledger.migrate import alembic_config
from ledger.models import SQLModel
from tests.support.docs import marked_block
from tests.support.processes import PAYRECON, payrecon_env

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "operations.md"


def _script() -> str:
    """The Python block the guide asks to save as `sqlite_to_postgres.py`."""
    block = marked_block(GUIDE, "sqlite-to-postgres-script")
    assert block.language == "python"
    return block.code


def _counts(url: str) -> dict[str, int]:
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return {
                name: connection.execute(select(func.count()).select_from(table)).scalar_one()
                for name, table in SQLModel.metadata.tables.items()
            }
    finally:
        engine.dispose()


def _run(command: list[str], **settings: str) -> subprocess.CompletedProcess[str]:
    env = {**payrecon_env(**settings), "PYTHONPATH": str(ROOT)}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_the_script_names_every_table_of_the_ledger() -> None:
    """A table added to the ledger and missing from the script's list would be left behind."""
    tree = ast.parse(_script())
    listed = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "TABLES" for t in node.targets)
    )
    assert set(listed) == set(SQLModel.metadata.tables)


def test_a_demo_ledger_moves_to_postgresql_whole(postgres_url: str, tmp_path: Path) -> None:
    """Every row of a demo ledger arrives, and the next row written on PostgreSQL gets a new id."""
    demo = _run([*PAYRECON, "demo", "--transfers", "20", "--directory", str(tmp_path / "demo")])
    assert demo.returncode == 0, demo.stderr
    sqlite_url = f"sqlite:///{tmp_path / 'demo' / 'ledger.db'}"
    script = tmp_path / "sqlite_to_postgres.py"
    script.write_text(_script())
    copy = [PAYRECON[0], str(script), sqlite_url, postgres_url]
    copied, again = _run(copy), _run(copy)
    after = _run(
        [*PAYRECON, "transfer", "expect", "--reference", "AFTER-MOVE", "--amount", "100"],
        database_url=postgres_url,
    )
    source, target = _counts(sqlite_url), _counts(postgres_url)
    assert copied.returncode == 0, copied.stderr
    assert source["transfer"] == 20 and source["delivery"] > 0 and source["finding"] > 0
    # The registration after the move adds a transfer and its audit row.
    moved = {**source, "transfer": source["transfer"] + 1, "audit_log": source["audit_log"] + 1}
    assert moved == target
    assert again.returncode != 0 and "not empty" in again.stderr
    assert after.returncode == 0, after.stderr


def test_the_guide_shows_what_db_upgrade_prints_the_head_revision(postgres_url: str) -> None:
    """Step 1's `payrecon db upgrade`, run as printed (on the test database), prints its comment."""
    block = marked_block(GUIDE, "postgres-upgrade")
    [command] = [line for line in block.code.splitlines() if "payrecon db upgrade" in line]
    [printed] = [line.removeprefix("# ") for line in block.code.splitlines() if line[:1] == "#"]
    assignment, *argv = shlex.split(command)
    variable, _, _ = assignment.partition("=")
    assert variable == "PAYRECON_DATABASE_URL" and argv[0] == "payrecon"
    head = ScriptDirectory.from_config(alembic_config(postgres_url)).get_current_head()
    upgraded = _run([*PAYRECON, *argv[1:]], database_url=postgres_url)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout.strip() == printed == f"database at revision {head}"
