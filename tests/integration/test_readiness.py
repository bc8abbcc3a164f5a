"""`writable` and `/readyz`: ready means the database would take a write, on both backends."""

from __future__ import annotations

import sqlite3
import time

import httpx
from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from ledger.db import SQLITE_BUSY_TIMEOUT_MS, create_db_engine, writable
from payrecon.settings import load_settings
from receiver.app import create_app
from tests.support.servers import running_server


def test_a_healthy_database_is_writable(engine: Engine) -> None:
    """A fresh ledger answers and takes writes."""
    assert writable(engine) == "ok"


def test_a_sqlite_file_held_by_another_writer_is_locked(tmp_path: object) -> None:
    """While another connection holds the write lock, readiness says `locked` within about a
    second, and says `ok` again once it is let go; the pool's busy timeout is restored."""
    path = f"{tmp_path}/held.db"
    engine = create_db_engine(f"sqlite:///{path}")
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA journal_mode=WAL")  # as every ledger is
        holder.execute("CREATE TABLE t (x)")
        holder.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        assert writable(engine) == "locked"
        assert time.monotonic() - started < 5
        holder.execute("ROLLBACK")
        assert writable(engine) == "ok"
        with engine.connect() as connection:
            driver = connection.connection.dbapi_connection
            assert driver.execute("PRAGMA busy_timeout").fetchone()[0] == SQLITE_BUSY_TIMEOUT_MS
    finally:
        holder.close()
        engine.dispose()


def test_a_read_only_postgresql_is_not_ready(postgres_url: str) -> None:
    """A server that refuses writes (a standby, or read-only by setting) is `read_only`."""
    url = make_url(postgres_url).update_query_dict(
        {"options": "-c default_transaction_read_only=on"}
    )
    engine = create_db_engine(url.render_as_string(hide_password=False))
    try:
        assert writable(engine) == "read_only"
    finally:
        engine.dispose()


def test_readyz_answers_503_while_sqlite_is_locked(tmp_path: object) -> None:
    """The real server's readiness follows the write lock: 503 `locked`, then 200."""
    path = f"{tmp_path}/ledger.db"
    settings = load_settings(database_url=f"sqlite:///{path}")
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA journal_mode=WAL")  # as every ledger is
        holder.execute("CREATE TABLE t (x)")
        with running_server(create_app(settings)) as url:
            holder.execute("BEGIN IMMEDIATE")
            locked = httpx.get(f"{url}/readyz", timeout=10)
            holder.execute("ROLLBACK")
            ready = httpx.get(f"{url}/readyz", timeout=10)
    finally:
        holder.close()
    assert (locked.status_code, locked.json()) == (503, {"status": "error", "database": "locked"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ok", "database": "ok"})
