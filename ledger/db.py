"""Engine and sessions: SQLite in WAL with synchronous=FULL, PostgreSQL through psycopg."""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Iterator
from typing import Any, Literal

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.pool import NullPool
from sqlmodel import Session

from ledger.errors import DatabaseUnavailableError

SQLITE_BUSY_TIMEOUT_MS = 10_000
_WRITE = "payrecon_write"
_SNAPSHOT = {"isolation_level": "REPEATABLE READ"}


def normalise_url(url: str) -> URL:
    """Parse a database URL; plain `postgresql://` means the psycopg 3 driver."""
    parsed = make_url(url)
    if parsed.drivername in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def sqlite_path(url: str) -> str | None:
    """The file a SQLite URL names, or None (PostgreSQL, or an in-memory database)."""
    parsed = normalise_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return parsed.database


def _sqlite_pragmas(dbapi_connection: Any, _record: Any, *, durable: bool = True) -> None:
    # Take transaction control from pysqlite so BEGIN IMMEDIATE can be issued for writes.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit is on disk before we answer 200 (WAL+NORMAL may lose the last commits
    # to a power cut, never to a crash of the process, and never corrupts the file).
    cursor.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    # Writers take the lock up front: no deadlock-prone upgrade from a read lock mid-transaction.
    immediate = connection.get_execution_options().get(_WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def create_db_engine(
    url: str, *, pool_size: int = 10, echo: bool = False, durable: bool = True
) -> Engine:
    """Build the engine for `url` with the ledger's durability settings.

    `durable=False` (SQLite only) lets a process whose every write may be done again after a
    power cut skip the fsync of each commit: the relay worker, whose lost record of an attempt
    means the event is sent again, as at-least-once delivery allows.
    """
    parsed = normalise_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(
            parsed,
            echo=echo,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            poolclass=NullPool if parsed.database in (None, "", ":memory:") else None,
        )
        event.listen(engine, "connect", functools.partial(_sqlite_pragmas, durable=durable))
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return create_engine(
        parsed,
        echo=echo,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        connect_args={"connect_timeout": 5},
    )


@contextlib.contextmanager
def read_session(engine: Engine) -> Iterator[Session]:
    """A session reading one consistent snapshot; closing it ends the transaction, loaded
    objects stay readable."""
    # A record is read in several statements (the transfer, then its findings and delivery
    # count). PostgreSQL's default READ COMMITTED gives each statement its own snapshot, so a
    # webhook committed in between showed its delivery beside the transfer's old status.
    # SQLite's read transaction (BEGIN, see _sqlite_begin) is one snapshot already.
    bound = engine if engine.dialect.name == "sqlite" else engine.execution_options(**_SNAPSHOT)
    with Session(bound, expire_on_commit=False) as session:
        yield session


@contextlib.contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """A write transaction (BEGIN IMMEDIATE on SQLite), committed on clean exit."""
    bound = engine.execution_options(**{_WRITE: True})
    with Session(bound, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except (OperationalError, DBAPIError) as exc:
            session.rollback()
            if getattr(exc, "connection_invalidated", False) or isinstance(exc, OperationalError):
                raise DatabaseUnavailableError(str(exc.orig or exc)) from exc
            raise
        except BaseException:
            session.rollback()
            raise


# How long a readiness check waits for a write lock (a probe's timeout is a few seconds).
READY_LOCK_TIMEOUT_MS = 1_000

# What `readiness` reports: the ledger took the write; does not answer; answers but cannot take
# a write (SQLite's write lock held past the wait; a read-only file or PostgreSQL standby); or is
# not at the migration revision the code needs.
Readiness = Literal["ok", "unavailable", "locked", "read_only", "schema_outdated"]

# The probe's write: Alembic's one-row table rewritten with its own value. It exists in every
# migrated ledger (no table of our own to migrate), and committing it goes through the same
# journal and fsync as a webhook's write, so a file that cannot be written fails here too (a
# rolled-back write on a connection opened earlier never touches the disk, and passes).
_PROBE_WRITE = "UPDATE alembic_version SET version_num = version_num"
_VERSION = "SELECT version_num FROM alembic_version"


def readiness(engine: Engine, *, revision: str) -> Readiness:
    """Whether the ledger is at `revision` and takes a write now: one small committed write."""
    try:
        with engine.connect() as connection:
            if engine.dialect.name == "sqlite":
                return _sqlite_ready(connection.connection.dbapi_connection, revision)
            return _postgres_ready(connection, revision)
    except (OperationalError, DBAPIError) as exc:
        return _refusal(str(exc.orig or exc))
    except sqlite3.Error as exc:
        return _refusal(str(exc))


def _sqlite_ready(driver: Any, revision: str) -> Readiness:
    # Wait for the write lock less than a writer would.
    driver.execute(f"PRAGMA busy_timeout={READY_LOCK_TIMEOUT_MS}")
    try:
        driver.execute("BEGIN IMMEDIATE")
        try:
            has_table = driver.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
            ).fetchone()
            if has_table is None or driver.execute(_VERSION).fetchone() != (revision,):
                driver.execute("ROLLBACK")
                return "schema_outdated"
            driver.execute(_PROBE_WRITE)
            driver.execute("COMMIT")
        except BaseException:
            if driver.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    driver.execute("ROLLBACK")
            raise
        return "ok"
    finally:
        driver.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")


def _postgres_ready(connection: Any, revision: str) -> Readiness:
    with connection.begin():
        # Waiting behind a migration's lock is "locked", not a probe that hangs.
        connection.exec_driver_sql(f"SET LOCAL lock_timeout = {READY_LOCK_TIMEOUT_MS}")
        if connection.exec_driver_sql("SELECT to_regclass('alembic_version')").scalar() is None:
            return "schema_outdated"
        if connection.exec_driver_sql(_VERSION).scalar() != revision:
            return "schema_outdated"
        connection.exec_driver_sql(_PROBE_WRITE)
    return "ok"


def _refusal(message: str) -> Readiness:
    lowered = message.lower()
    if "locked" in lowered or "lock timeout" in lowered:  # a writer holds the lock
        return "locked"
    if "readonly" in lowered or "read-only" in lowered:
        return "read_only"
    return "unavailable"
