"""Registering many transfers or collections at once: which references the ledger already
holds, and the new rows inserted in batches through `ledger.bulk` (caller's transaction)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import Table
from sqlmodel import Session

from ledger.bulk import Bulk, Statement, table_columns


def held_references(session: Session, table: Table, keys: Collection[str]) -> set[str]:
    """Those of `keys` that are a merchant's or a provider's reference in `table` already."""
    if not keys:
        return set()
    bulk = Bulk(session.connection())
    statements: list[Statement] = list(bulk.keyed_lookups_only())
    # One statement per column, each searching its own unique index with the keys as one
    # JSON parameter (`ledger.bulk`): expanded IN lists of thousands of parameters, on a
    # table without statistics yet, had PostgreSQL scan the table for every batch.
    for column in ("reference", "provider_reference"):
        condition, parameter = bulk.key_set(column, keys)
        # The table is a model's and the condition ledger.bulk's: no outside text reaches the SQL.
        sql = f"SELECT reference, provider_reference FROM {table.name} WHERE {condition}"  # noqa: S608
        statements.append(Statement(sql, (parameter,), returns_rows=True))
    held: set[str] = set()
    for rows in bulk.send(statements):
        for reference, provider_reference in rows:
            held.update(v for v in (reference, provider_reference) if v is not None)
    return held & set(keys)


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
