"""`readiness` and `/readyz`: ready means the ledger is at the code's revision and took a real
write, on both backends."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from alembic import command
from sqlalchemy import Engine, event
from sqlalchemy.engine import make_url

from ledger.db import SQLITE_BUSY_TIMEOUT_MS, create_db_engine, readiness
from ledger.migrate import alembic_config, head_revision
from payrecon.app import create_app
from payrecon.settings import load_settings
from receiver.app import readiness_check
from receiver.readiness import CachedReadiness
from tests.support.databases import PostgresFactory, SqliteFactory
from tests.support.servers import running_server
from tests.support.webhooks import encode, success_body

HEAD = head_revision()


def test_a_healthy_ledger_is_ready(engine: Engine) -> None:
    """A fresh ledger at the head revision takes the probe's write, again and again."""
    assert readiness(engine, revision=HEAD) == "ok"
    assert readiness(engine, revision=HEAD) == "ok"


def test_a_sqlite_file_held_by_another_writer_is_locked(sqlite_factory: SqliteFactory) -> None:
    """While another connection holds the write lock, readiness says `locked` within about a
    second, and says `ok` again once it is let go; the pool's busy timeout is restored."""
    url = sqlite_factory.new()
    engine = create_db_engine(url)
    holder = sqlite3.connect(str(make_url(url).database), isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        assert readiness(engine, revision=HEAD) == "locked"
        assert time.monotonic() - started < 5
        holder.execute("ROLLBACK")
        assert readiness(engine, revision=HEAD) == "ok"
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
        assert readiness(engine, revision=HEAD) == "read_only"
    finally:
        engine.dispose()


def _readyz_until(base: str, status: int) -> httpx.Response:
    """/readyz polled until it answers `status` (an answer is reused for up to a second, so a
    change shows within about one): the last answer, after at most ten seconds."""
    for _ in range(100):
        answer = httpx.get(f"{base}/readyz", timeout=10)
        if answer.status_code == status:
            break
        time.sleep(0.1)
    return answer


def test_readyz_writes_at_most_once_a_second_whatever_the_request_rate(
    database_url: str, engine: Engine
) -> None:
    """Fifty GETs of /readyz within one second of the cache's clock open one connection for
    the write check; fifty more a second later, exactly one more."""
    checks: list[object] = []

    def count(connection: object) -> None:
        checks.append(connection)

    app = create_app(load_settings(database_url=database_url), engine=engine)
    now = [100.0]
    # The app's own check, on a clock the test moves (the server runs in this process).
    app.state.readiness = CachedReadiness(readiness_check(engine), clock=lambda: now[0])
    with running_server(app) as base:
        event.listen(engine, "engine_connect", count)
        try:
            first = [httpx.get(f"{base}/readyz", timeout=10) for _ in range(50)]
            within_the_second = len(checks)
            now[0] += 1.0
            second = [httpx.get(f"{base}/readyz", timeout=10) for _ in range(50)]
        finally:
            event.remove(engine, "engine_connect", count)
    assert [answer.status_code for answer in first + second] == [200] * 100
    assert within_the_second == 1
    assert len(checks) == 2


def test_readyz_answers_503_while_sqlite_is_locked(sqlite_factory: SqliteFactory) -> None:
    """The real server's readiness follows the write lock: 503 `locked`, then 200."""
    url = sqlite_factory.new()
    settings = load_settings(database_url=url)
    holder = sqlite3.connect(str(make_url(url).database), isolation_level=None)
    try:
        with running_server(create_app(settings)) as base:
            holder.execute("BEGIN IMMEDIATE")
            locked = httpx.get(f"{base}/readyz", timeout=10)
            holder.execute("ROLLBACK")
            ready = _readyz_until(base, 200)
    finally:
        holder.close()
    assert (locked.status_code, locked.json()) == (503, {"status": "error", "database": "locked"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ok", "database": "ok"})


@pytest.mark.parametrize("revision", ["0001", "base"])
def test_readyz_answers_503_on_a_ledger_behind_the_code(database_url: str, revision: str) -> None:
    """A ledger at an older revision, or never migrated, is `schema_outdated` on a real server."""
    command.downgrade(alembic_config(database_url), revision)
    with running_server(create_app(load_settings(database_url=database_url))) as base:
        answer = httpx.get(f"{base}/readyz", timeout=10)
    assert (answer.status_code, answer.json()) == (
        503,
        {"status": "error", "database": "schema_outdated"},
    )


def test_readyz_answers_503_on_an_empty_postgresql(postgres_factory: PostgresFactory) -> None:
    """A PostgreSQL database without any table (no `db upgrade` yet) is `schema_outdated`."""
    url = postgres_factory.empty()
    with running_server(create_app(load_settings(database_url=url))) as base:
        answer = httpx.get(f"{base}/readyz", timeout=10)
    assert (answer.status_code, answer.json()["database"]) == (503, "schema_outdated")


@contextlib.contextmanager
def _immutable(*paths: Path) -> Iterator[None]:
    """Make files immutable with `chattr +i`: unlike file modes, this stops root too."""
    subprocess.run(["chattr", "+i", *map(str, paths)], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], check=True, capture_output=True)


def _deliver(base: str, reference: str) -> httpx.Response:
    body = encode(success_body(reference))
    headers = {"Content-Type": "application/json"}
    return httpx.post(f"{base}/webhook", content=body, headers=headers, timeout=10)


def test_readyz_answers_503_while_the_sqlite_files_cannot_be_written(
    sqlite_factory: SqliteFactory, tmp_path: Path
) -> None:
    """With the ledger file and its WAL made immutable under a running server (whose pool holds
    connections opened before), webhooks get 503 and so does /readyz; both recover after."""
    if (
        shutil.which("chattr") is None
        or subprocess.run(["chattr", "+i", str(tmp_path)], capture_output=True).returncode
    ):
        pytest.skip("chattr +i is not available here (needs CAP_LINUX_IMMUTABLE)")
    subprocess.run(["chattr", "-i", str(tmp_path)], check=True)
    url = sqlite_factory.new()
    path = Path(str(make_url(url).database))
    with running_server(create_app(load_settings(database_url=url))) as base:
        before = httpx.get(f"{base}/readyz", timeout=10)
        first = _deliver(base, "T-1")
        wal = path.with_name(path.name + "-wal")
        # Not the -shm file: SQLite maps it, and a read-only one kills the process (SIGBUS).
        with _immutable(path, wal):
            refused = _deliver(base, "T-2")
            during = _readyz_until(base, 503)
        after = _readyz_until(base, 200)
    assert (before.status_code, first.status_code) == (200, 200)
    assert refused.status_code == 503
    assert during.status_code == 503
    assert during.json()["database"] in {"read_only", "unavailable"}
    assert after.status_code == 200
