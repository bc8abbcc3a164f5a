"""Engine and sessions: SQLite in WAL with synchronous=FULL, PostgreSQL through psycopg."""

from __future__ import annotations

import contextlib
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


def normalise_url(url: str) -> URL:
    """Parse a database URL; plain `postgresql://` means the psycopg 3 driver."""
    parsed = make_url(url)
    if parsed.drivername in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Take transaction control from pysqlite so BEGIN IMMEDIATE can be issued for writes.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit is on disk before we answer 200 (WAL+NORMAL may lose the last commits).
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    # Writers take the lock up front: no deadlock-prone upgrade from a read lock mid-transaction.
    immediate = connection.get_execution_options().get(_WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def create_db_engine(url: str, *, pool_size: int = 10, echo: bool = False) -> Engine:
    """Build the engine for `url` with the ledger's durability settings."""
    parsed = normalise_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(
            parsed,
            echo=echo,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            poolclass=NullPool if parsed.database in (None, "", ":memory:") else None,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
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
    """A session for reading; closing it ends the transaction, loaded objects stay readable."""
    with Session(engine, expire_on_commit=False) as session:
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


# How long a readiness check waits for SQLite's write lock (a probe's timeout is a few seconds).
READY_LOCK_TIMEOUT_MS = 1_000

# What `writable` reports: the database takes writes, does not answer, or answers but cannot
# take one (SQLite's write lock held past the wait; a read-only PostgreSQL, such as a standby).
Readiness = Literal["ok", "unavailable", "locked", "read_only"]


def writable(engine: Engine) -> Readiness:
    """Whether the database would take a write now, without writing anything."""
    try:
        with engine.connect() as connection:
            if engine.dialect.name == "sqlite":
                return _sqlite_writable(connection.connection.dbapi_connection)
            read_only = connection.exec_driver_sql(
                "SELECT current_setting('transaction_read_only')"
            ).scalar()
            return "read_only" if read_only == "on" else "ok"
    except (OperationalError, DBAPIError) as exc:
        return _refusal(str(exc.orig or exc))
    except sqlite3.Error as exc:
        return _refusal(str(exc))


def _sqlite_writable(driver: Any) -> Readiness:
    # Take the write lock and let it go at once, waiting for it less than a writer would.
    driver.execute(f"PRAGMA busy_timeout={READY_LOCK_TIMEOUT_MS}")
    try:
        driver.execute("BEGIN IMMEDIATE")
        driver.execute("ROLLBACK")
        return "ok"
    finally:
        driver.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")


def _refusal(message: str) -> Readiness:
    lowered = message.lower()
    if "locked" in lowered:  # SQLite's write lock is held by another connection
        return "locked"
    if "readonly" in lowered or "read-only" in lowered:
        return "read_only"
    return "unavailable"
