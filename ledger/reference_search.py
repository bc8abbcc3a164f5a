"""Search by reference: case-insensitive, by prefix, through an index (never `LIKE '%…'`).

`transfer` and `collection` carry `reference_key` and `provider_reference_key`, the reference
upper-cased by the database and indexed (migration 0008). A search text is upper-cased the same
way and becomes a half-open range `[PREFIX, PREFIX with its last character raised by one)` on
those columns: every key starting with the prefix sorts inside it, and a B-tree index answers a
range on both databases (SQLite compares text by its UTF-8 bytes, PostgreSQL under the `C` or
`C.UTF-8` collation payrecon's databases use by code point: the same order).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.sql.elements import ColumnElement

from ledger.models import Collection, Transfer
from ledger.subjects import BOOK_MODELS

# The longest prefix searched for: a reference is at most 100 characters.
MAX_PREFIX = 100
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def search_key(text: str) -> str:
    """`text` as the key columns hold it: stripped, ASCII letters upper-cased (SQLite's
    `upper()` changes only those, so both databases and Python agree)."""
    return text.strip().translate(_ASCII_UPPER)


def prefix_range(column: ColumnElement[Any], key: str) -> ColumnElement[bool]:
    """`column` starts with `key` (already a `search_key`), as a range an index answers."""
    last = ord(key[-1])
    if last >= 0x10FFFF:  # nothing sorts after the last code point: an open range
        return column >= key
    return and_(column >= key, column < key[:-1] + chr(last + 1))


def either_reference(model: type[Transfer] | type[Collection], key: str) -> ColumnElement[bool]:
    """`model`'s rows whose reference or provider reference starts with `key` (each side a
    range on its own index)."""
    table = model.__table__  # type: ignore[union-attr]
    return or_(
        prefix_range(table.c.reference_key, key), prefix_range(table.c.provider_reference_key, key)
    )


def matching_rows(model: type[Transfer] | type[Collection], key: str) -> Any:
    """The ids of `model`'s rows `either_reference` keeps."""
    return select(model.__table__.c.id).where(either_reference(model, key))  # type: ignore[union-attr]


def about_reference(columns: Any, key: str) -> ColumnElement[bool]:
    """Rows of a table with `subject`, `subject_id` (`columns`) about a transfer or collection
    whose reference starts with `key`."""
    return or_(
        *(
            and_(
                columns.subject == subject.value, columns.subject_id.in_(matching_rows(model, key))
            )
            for subject, model in BOOK_MODELS.items()
        )
    )
