"""Dialect-aware `INSERT … ON CONFLICT DO NOTHING`: idempotency as a database fact."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session


def insert_ignore(
    session: Session,
    table: Table,
    values: Mapping[str, Any],
    conflict_columns: Sequence[str] | None = None,
) -> int | None:
    """Insert a row unless a unique key already holds it; the new primary key, or None."""
    dialect = session.get_bind().dialect.name
    module: Any = postgresql if dialect == "postgresql" else sqlite
    statement = module.insert(table).values(**values)
    statement = statement.on_conflict_do_nothing(index_elements=conflict_columns)
    primary = next(iter(table.primary_key.columns))
    result = session.execute(statement.returning(primary))
    row = result.first()
    return None if row is None else row[0]


def insert_ignore_many(
    session: Session,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    conflict_columns: Sequence[str],
    returning: Sequence[str],
) -> list[tuple[Any, ...]]:
    """Insert the rows (one cached statement, sent in batches) except those a unique key
    already holds; the `returning` columns of the rows inserted, in no particular order."""
    if not rows:
        return []
    dialect = session.get_bind().dialect.name
    module: Any = postgresql if dialect == "postgresql" else sqlite
    statement = module.insert(table).on_conflict_do_nothing(index_elements=list(conflict_columns))
    statement = statement.returning(*(table.c[name] for name in returning))
    return [tuple(row) for row in session.execute(statement, list(rows))]
