"""Registering many transfers or collections at once: which references the ledger already
holds, and the new rows inserted in batches through `ledger.bulk` (caller's transaction)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, or_, select
from sqlmodel import Session

from ledger.bulk import Bulk, table_columns

# Keys per lookup statement: two IN lists of this many stay under SQLite's parameter cap.
LOOKUP_CHUNK = 5_000


def held_references(session: Session, table: Table, keys: Collection[str]) -> set[str]:
    """Those of `keys` that are a merchant's or a provider's reference in `table` already."""
    held: set[str] = set()
    ordered = sorted(keys)
    for start in range(0, len(ordered), LOOKUP_CHUNK):
        chunk = ordered[start : start + LOOKUP_CHUNK]
        rows = session.execute(
            select(table.c.reference, table.c.provider_reference).where(
                or_(table.c.reference.in_(chunk), table.c.provider_reference.in_(chunk))
            )
        ).all()
        for reference, provider_reference in rows:
            held.update(value for value in (reference, provider_reference) if value is not None)
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
