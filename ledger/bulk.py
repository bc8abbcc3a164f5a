"""Bulk statements through the driver: multi-row inserts, key-set filters, batched updates.

The receiver's group commit writes thousands of rows a second. SQLAlchemy Core spends most
of a large `executemany` converting parameters row by row, so these statements are written
for the driver and sent with `exec_driver_sql`, which still translates driver errors into
SQLAlchemy's (the callers' single error boundary stays where it was). Every statement text
depends only on the table, the columns and the number of rows, so the driver's statement
cache and PostgreSQL's prepared statements are reused from batch to batch.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import Connection

from ledger.types import UTCDateTime

# Both drivers cap the parameters of one statement (SQLite 32,766, PostgreSQL 65,535).
MAX_PARAMETERS = 30_000


# A column of a bulk statement: its name and its PostgreSQL type (for the unnest arrays).
Column = tuple[str, str]


@functools.cache
def _values_sql(table: str, names: tuple[str, ...], rows: int, tail: str) -> str:
    row = "(" + ", ".join(["?"] * len(names)) + ")"
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES " + ", ".join([row] * rows) + tail


@functools.cache
def _unnest_sql(table: str, columns: tuple[Column, ...], tail: str) -> str:
    names = ", ".join(name for name, _ in columns)
    arrays = ", ".join(f"%b::{kind}[]" for _, kind in columns)
    return f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays}){tail}"


@functools.cache
def _update_sql(table: str, columns: tuple[Column, ...], key: Column) -> str:
    assignments = ", ".join(f"{name} = v.{name}" for name, _ in columns)
    arrays = ", ".join(f"%b::{kind}[]" for _, kind in (*columns, key))
    names = ", ".join(name for name, _ in (*columns, key))
    return (
        f"UPDATE {table} SET {assignments} FROM unnest({arrays}) AS v({names}) "
        f"WHERE {table}.{key[0]} = v.{key[0]}"
    )


def _tail(ignore_conflicts: bool, returning: Sequence[str]) -> str:
    tail = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
    return tail + (f" RETURNING {', '.join(returning)}" if returning else "")


class Bulk:
    """Bulk statements on one connection, in the caller's transaction (never commits).

    On PostgreSQL every statement takes one array per column (`unnest`), so its text is the
    same for any number of rows, sent in binary (`%b`: psycopg's text array format escapes
    every element with a regular expression, six times slower); on SQLite it is a multi-row
    VALUES list.
    """

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.postgres = connection.dialect.name == "postgresql"
        self.mark = "%s" if self.postgres else "?"
        # The dialect's own processing, so stored values match what the ORM writes and reads
        # (SQLite keeps a fixed-width text form that sorts and compares correctly).
        dialect = connection.dialect
        processor = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
        self._time: Callable[[Any], Any] = processor or (lambda value: value)

    def time(self, value: dt.datetime | None) -> Any:
        """A timezone-aware datetime as the ledger stores it on this database."""
        return None if value is None else self._time(value)

    def keyed_lookups_only(self) -> None:
        """Make PostgreSQL search indexes for the rest of this transaction.

        A young table has no statistics yet (autovacuum analyses it a minute later), and the
        planner, underestimating it, scans the whole table for a key set; under a burst of
        webhooks that cost grows with every batch. Every lookup here is by an indexed key.
        """
        if self.postgres:
            self.connection.exec_driver_sql("SET LOCAL enable_seqscan = off")

    def key_set(self, column: str, keys: Iterable[str]) -> tuple[str, Any]:
        """A `column IN keys` condition with a single parameter, whatever the number of keys."""
        values = list(keys)
        if self.postgres:
            return f"{column} = ANY({self.mark})", values
        # SQLite: a JSON array read by json_each; the planner still searches the column's index.
        return f"{column} IN (SELECT value FROM json_each({self.mark}))", json.dumps(values)

    def select(self, sql: str, parameters: Sequence[Any]) -> list[Any]:
        """Run a driver-level SELECT (`mark` placeholders) and return its rows."""
        return list(self.connection.exec_driver_sql(sql, tuple(parameters)))

    def insert(
        self,
        table: str,
        columns: Sequence[Column],
        rows: Sequence[Sequence[Any]],
        *,
        ignore_conflicts: bool = False,
        returning: Sequence[str] = (),
    ) -> list[Any]:
        """Insert `rows` (values in `columns` order); the RETURNING rows of the statements.

        With `ignore_conflicts`, rows that hit a unique constraint are skipped and return
        nothing, so the caller can tell a race by counting.
        """
        if not rows:
            return []
        tail = _tail(ignore_conflicts, returning)
        if self.postgres:
            sql = _unnest_sql(table, tuple(columns), tail)
            result = self.connection.exec_driver_sql(sql, _arrays(rows))
            return list(result) if returning else []
        names = tuple(name for name, _ in columns)
        per_statement = max(1, MAX_PARAMETERS // len(names))
        returned: list[Any] = []
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            flat = tuple(value for row in chunk for value in row)
            result = self.connection.exec_driver_sql(
                _values_sql(table, names, len(chunk), tail), flat
            )
            if returning:
                returned.extend(result)
        return returned

    def update(
        self,
        table: str,
        columns: Sequence[Column],
        key: Column,
        rows: Sequence[Sequence[Any]],
    ) -> None:
        """Set `columns` on the row whose `key` is each row's last value."""
        if not rows:
            return
        if self.postgres:
            sql = _update_sql(table, tuple(columns), key)
            self.connection.exec_driver_sql(sql, _arrays(rows))
            return
        assignments = ", ".join(f"{name} = ?" for name, _ in columns)
        sql = f"UPDATE {table} SET {assignments} WHERE {key[0]} = ?"
        self.connection.exec_driver_sql(sql, [tuple(row) for row in rows])


def _arrays(rows: Sequence[Sequence[Any]]) -> tuple[list[Any], ...]:
    # Rows to one list per column: psycopg sends a list as a PostgreSQL array.
    return tuple(list(column) for column in zip(*rows, strict=True))
