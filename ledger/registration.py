"""Registering many transfers or collections at once: which references the ledger already
holds, and the new rows inserted in batches through `ledger.bulk` (caller's transaction)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import Table
from sqlmodel import Session

from ledger.bulk import Bulk, Statement, table_columns


def held_rows(
    session: Session, table: Table, keys: Collection[str], columns: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """The rows of `table` held under any of `keys` as a merchant's or a provider's reference,
    each with `columns` (as the database stores them), by every reference it is held under.
    A merchant's reference wins over a provider's reference that happens to be equal."""
    if not keys:
        return {}
    names = ("reference", "provider_reference", *columns)
    bulk = Bulk(session.connection())
    statements: list[Statement] = list(bulk.keyed_lookups_only())
    # One statement per column, each searching its own unique index with the keys as one
    # JSON parameter (`ledger.bulk`): expanded IN lists of thousands of parameters, on a
    # table without statistics yet, had PostgreSQL scan the table for every batch.
    for column in ("reference", "provider_reference"):
        condition, parameter = bulk.key_set(column, keys)
        # The table is a model's and the condition ledger.bulk's: no outside text reaches the SQL.
        sql = f"SELECT {', '.join(names)} FROM {table.name} WHERE {condition}"  # noqa: S608
        statements.append(Statement(sql, (parameter,), returns_rows=True))
    by_provider: dict[str, dict[str, Any]] = {}
    by_reference: dict[str, dict[str, Any]] = {}
    for rows in bulk.send(statements):
        for values in rows:
            row = dict(zip(names, values, strict=True))
            by_reference[row["reference"]] = row
            if row["provider_reference"] is not None:
                by_provider[row["provider_reference"]] = row
    return {**by_provider, **by_reference}


def stored_time(session: Session, value: dt.datetime | None) -> Any:
    """`value` as `held_rows` reads a stored time back on this database."""
    return Bulk(session.connection()).time(value)


def insert_new(session: Session, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert `rows` (every one with the same keys, none held yet) in multi-row statements."""
    if not rows:
        return
    names = tuple(rows[0])
    bulk = Bulk(session.connection())
    times = {name for name in names if name.endswith("_at")}
    values = [
        tuple(bulk.time(row[name]) if name in times else row[name] for name in names)
        for row in rows
    ]
    bulk.send(bulk.insert(table.name, table_columns(table, names), values))
