"""Bulk statements through the driver: multi-row inserts, key-set filters, batched updates.

The receiver's group commit writes thousands of rows a second. SQLAlchemy Core spends most
of a large `executemany` converting parameters row by row, so these statements are written
for the driver. Every statement text depends only on the table, the columns and the number
of rows, so the driver's statement cache and PostgreSQL's prepared statements are reused
from batch to batch.

Statements are built first and sent together (`Bulk.send`) on the driver's own connection,
inside the transaction SQLAlchemy began: on PostgreSQL in one pipeline, so a whole group of
statements costs one round trip to the server instead of one each; on SQLite, which has no
round trips, one after the other. Driver errors are translated into SQLAlchemy's, as
`exec_driver_sql` would, and so is a value that cannot be encoded (an unpaired surrogate), as
a `StatementError`: the callers catch SQLAlchemy's errors and nothing else.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import orjson
from sqlalchemy import Connection, Table
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError, StatementError

from ledger.types import UTCDateTime

if TYPE_CHECKING:
    import psycopg

# Both drivers cap the parameters of one statement (SQLite 32,766, PostgreSQL 65,535).
MAX_PARAMETERS = 30_000


# A column of a bulk statement: its name and its PostgreSQL type (for json_to_recordset).
Column = tuple[str, str]


@functools.cache
def table_columns(table: Table, names: tuple[str, ...]) -> tuple[Column, ...]:
    """The bulk columns `names` of `table`, typed as its definition (ledger.models) types
    them on PostgreSQL."""
    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
    return tuple((name, table.c[name].type.compile(dialect=dialect)) for name in names)


@dataclass(frozen=True)
class Statement:
    """One driver-level statement (`%s` placeholders on PostgreSQL, `?` on SQLite) and its
    parameters (or `%(name)s` placeholders and a mapping, as SQLAlchemy compiles for psycopg)."""

    sql: str
    parameters: Sequence[Any] | Mapping[str, Any]
    returns_rows: bool = False


@functools.cache
def _values_sql(table: str, names: tuple[str, ...], rows: int) -> str:
    row = "(" + ", ".join(["?"] * len(names)) + ")"
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES " + ", ".join([row] * rows)


def _recordset(columns: tuple[Column, ...]) -> str:
    # The rows arrive as one JSON array of objects, typed by the column list.
    return "json_to_recordset(%s::json) AS v(" + ", ".join(f"{n} {k}" for n, k in columns) + ")"


@functools.cache
def _recordset_insert_sql(table: str, columns: tuple[Column, ...]) -> str:
    names = ", ".join(name for name, _ in columns)
    return f"INSERT INTO {table} ({names}) SELECT {names} FROM {_recordset(columns)}"


@functools.cache
def _recordset_update_sql(table: str, columns: tuple[Column, ...], key: Column) -> str:
    assignments = ", ".join(f"{name} = v.{name}" for name, _ in columns)
    return (
        f"UPDATE {table} SET {assignments} FROM {_recordset((*columns, key))} "
        f"WHERE {table}.{key[0]} = v.{key[0]}"
    )


def sqlite_time(value: dt.datetime) -> str:
    """A timezone-aware datetime as SQLAlchemy's SQLite dialect stores it through
    ledger.types.UTCDateTime (naive UTC, `YYYY-MM-DD HH:MM:SS.ffffff`), by the C `isoformat`
    instead of its Python formatting: a relay record writes three per delivery."""
    if value.tzinfo is None:
        raise ValueError("naive datetime given to the ledger")
    return value.astimezone(dt.UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def _json_value(value: Any) -> str:
    # bytea's text form; orjson writes every other value the ledger stores.
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    raise TypeError(f"cannot send {type(value).__name__} in a bulk statement")


def _records(columns: Sequence[Column], rows: Sequence[Sequence[Any]]) -> str:
    names = [name for name, _ in columns]
    records = [dict(zip(names, row, strict=True)) for row in rows]
    try:
        return orjson.dumps(records, default=_json_value).decode()
    except orjson.JSONEncodeError as exc:
        raise StatementError("a bulk row cannot be encoded", None, None, exc) from exc


class Bulk:
    """Bulk statements on one connection, in the caller's transaction (never commits).

    On PostgreSQL every statement takes its rows as one JSON parameter (`json_to_recordset`),
    so its text is the same for any number of rows, and the rows are encoded by orjson in C
    (psycopg's array dumpers, binary or text, spend several microseconds per value in
    Python); on SQLite it is a multi-row VALUES list.
    """

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.postgres = connection.dialect.name == "postgresql"
        # The dialect's own processing, so stored values match what the ORM writes and reads
        # (SQLite keeps a fixed-width text form that sorts and compares correctly).
        dialect = connection.dialect
        processor = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
        self._time: Callable[[Any], Any] = processor or (lambda value: value)
        if dialect.name == "sqlite":
            self._time = sqlite_time  # the same text, a fifth of the cost

    def time(self, value: dt.datetime | None) -> Any:
        """A timezone-aware datetime as the ledger stores it on this database."""
        return None if value is None else self._time(value)

    def keyed_lookups_only(self) -> list[Statement]:
        """The statement that makes PostgreSQL search indexes for the rest of the transaction.

        A young table has no statistics yet (autovacuum analyses it a minute later), and the
        planner, underestimating it, scans the whole table for a key set; under a burst of
        webhooks that cost grows with every batch. Every lookup here is by an indexed key.
        """
        return [Statement("SET LOCAL enable_seqscan = off", ())] if self.postgres else []

    def key_set(self, column: str, keys: Iterable[str]) -> tuple[str, Any]:
        """A `column IN keys` condition with a single parameter, whatever the number of keys."""
        # The keys go as one JSON array, read by the database; the planner still searches the
        # column's index for each key.
        values = orjson.dumps(list(keys)).decode()
        if self.postgres:
            return f"{column} = ANY(ARRAY(SELECT json_array_elements_text(%s::json)))", values
        return f"{column} IN (SELECT value FROM json_each(?))", values

    def reserve_ids(self, table: str, count: int) -> Statement:
        """A statement whose rows, read by `reserved`, are `count` unused ids of `table`.

        Ids chosen before the insert let every row of a batch, and the rows that refer to
        it, go to the server in one pipeline. PostgreSQL draws them from the table's
        sequence (an id drawn and not used is a gap, as after a rollback); SQLite reads the
        highest id, which no other writer can change while BEGIN IMMEDIATE holds the lock.
        """
        if self.postgres:
            # The sequence named as a constant (the serial column's default name): looked up
            # with pg_get_serial_sequence it was resolved again for every row, at ~4 µs each.
            return Statement(
                f"SELECT nextval('{table}_id_seq'::regclass) FROM generate_series(1, %s)",
                (count,),
                returns_rows=True,
            )
        return Statement(f"SELECT coalesce(max(id), 0) FROM {table}", (), returns_rows=True)

    def reserved(self, rows: list[Any], count: int) -> list[int]:
        """The ids of a `reserve_ids` statement's rows."""
        if self.postgres:
            return [row[0] for row in rows]
        highest = rows[0][0]  # SQLite: one row, the highest id in use
        return list(range(highest + 1, highest + 1 + count))

    def insert(
        self, table: str, columns: Sequence[Column], rows: Sequence[Sequence[Any]]
    ) -> list[Statement]:
        """Statements inserting `rows` (values in `columns` order).

        A row that hits a unique constraint fails the statement, and with it the transaction.
        """
        if not rows:
            return []
        if self.postgres:
            return [
                Statement(_recordset_insert_sql(table, tuple(columns)), (_records(columns, rows),))
            ]
        names = tuple(name for name, _ in columns)
        per_statement = max(1, MAX_PARAMETERS // len(names))
        return [
            Statement(
                _values_sql(table, names, len(chunk)),
                tuple(value for row in chunk for value in row),
            )
            for chunk in (
                rows[start : start + per_statement] for start in range(0, len(rows), per_statement)
            )
        ]

    def update(
        self, table: str, columns: Sequence[Column], key: Column, rows: Sequence[Sequence[Any]]
    ) -> list[Statement]:
        """Statements setting `columns` on the row whose `key` is each row's last value."""
        if not rows:
            return []
        if self.postgres:
            sql = _recordset_update_sql(table, tuple(columns), key)
            return [Statement(sql, (_records((*columns, key), rows),))]
        assignments = ", ".join(f"{name} = ?" for name, _ in columns)
        sql = f"UPDATE {table} SET {assignments} WHERE {key[0]} = ?"
        return [Statement(sql, tuple(row)) for row in rows]

    def send(self, statements: Sequence[Statement]) -> list[list[Any]]:
        """Run the statements in order; the rows of each (empty for those returning none).

        They go straight to the driver's connection, in the transaction SQLAlchemy began on
        it: SQLAlchemy's own execution path costs more per statement than SQLite takes to
        run one. A driver error comes out as SQLAlchemy's exception for it.
        """
        dbapi = self.connection.dialect.loaded_dbapi
        try:
            if self.postgres:
                return self._pipeline(statements)
            return self._in_turn(statements)
        except dbapi.Error as exc:
            raise DBAPIError.instance(
                f"a group of {len(statements)} bulk statements", None, exc, dbapi.Error
            ) from exc
        except UnicodeEncodeError as exc:  # raised by the driver before the database sees it
            raise StatementError(
                f"a group of {len(statements)} bulk statements holds a value that cannot be "
                "encoded",
                None,
                None,
                exc,
            ) from exc

    def _in_turn(self, statements: Sequence[Statement]) -> list[list[Any]]:
        cursor = self.connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            results: list[list[Any]] = []
            for statement in statements:
                cursor.execute(statement.sql, statement.parameters)
                results.append(list(cursor.fetchall()) if statement.returns_rows else [])
            return results
        finally:
            cursor.close()

    def _pipeline(self, statements: Sequence[Statement]) -> list[list[Any]]:
        driver = cast("psycopg.Connection[Any]", self.connection.connection.dbapi_connection)
        cursors: list[psycopg.Cursor[Any]] = []
        try:
            with driver.pipeline():
                for statement in statements:
                    cursor = driver.cursor()
                    cursor.execute(statement.sql, statement.parameters)
                    cursors.append(cursor)
            return [
                cursor.fetchall() if statement.returns_rows else []
                for cursor, statement in zip(cursors, statements, strict=True)
            ]
        finally:
            for cursor in cursors:
                cursor.close()
