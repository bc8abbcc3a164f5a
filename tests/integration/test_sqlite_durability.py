"""SQLite commits reach the disk before they count, except in a process that chose otherwise."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from ledger.db import create_db_engine

# PRAGMA synchronous answers 1 for NORMAL and 2 for FULL.
NORMAL, FULL = 1, 2


def _synchronous(url: str, **options: bool) -> tuple[int, str]:
    engine = create_db_engine(url, **options)
    try:
        with engine.connect() as connection:
            level = connection.execute(text("PRAGMA synchronous")).scalar_one()
            journal = connection.execute(text("PRAGMA journal_mode")).scalar_one()
    finally:
        engine.dispose()
    return int(level), str(journal)


def test_every_engine_is_wal_and_fully_synchronous_unless_asked(tmp_path: Path) -> None:
    """The default engine fsyncs every commit (FULL); `durable=False`, the relay worker's,
    keeps WAL and drops only the per-commit fsync (NORMAL)."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    assert _synchronous(url) == (FULL, "wal")
    assert _synchronous(url, durable=False) == (NORMAL, "wal")
    assert _synchronous(url, durable=True) == (FULL, "wal")
