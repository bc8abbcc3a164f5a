"""The subject being reconciled: a transfer, a collection or a statement line, named one way.

A subject is a row of one table (its *book*) that findings, provider checks and relay events
point at by `(subject, subject_id)`: `finding`, `provider_check` and `relay_event` all carry
those two columns (migration 0009). People and the relay's order rule name a subject by its
key, `kind:REFERENCE` (`transfer:T-1`), the form the audit log has always written and
`GET /api/events?subject=` reads (docs/architecture.md, "The subject model"): `SubjectRef.key`
is the one rendering of it. A statement line has no reference of its own (a bank's reference
column is neither unique nor always there): it is named by its id, `statement_line:17`.

Also here, because every book shares them: the lookup "by either reference, the merchant's
wins" and the columns a new checkable row starts with.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import String, and_, cast, or_, select
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session, col

from ledger.events.types import Subject
from ledger.models import Collection, StatementLine, Transfer
from ledger.types import TransferStatus

__all__ = [
    "BOOK_MODELS",
    "SUBJECT_MODELS",
    "Subject",
    "SubjectRef",
    "about",
    "checkable_row",
    "find_by_reference",
    "subject_key",
    "subject_of",
    "subject_reference",
]

# The table of each subject: where its reference, status and event_sequence live.
BOOK_MODELS: dict[Subject, type[Transfer] | type[Collection]] = {
    Subject.TRANSFER: Transfer,
    Subject.COLLECTION: Collection,
}

# Every subject's table: the books, and statement lines (findings and relay events name them
# too; they have an `event_sequence`, not a reference, a status or provider checks).
SUBJECT_MODELS: dict[Subject, type[Transfer] | type[Collection] | type[StatementLine]] = {
    **BOOK_MODELS,
    Subject.STATEMENT_LINE: StatementLine,
}

Row = TypeVar("Row", Transfer, Collection)


def reference_column(subject: Subject, columns: Any) -> Any:
    """The SQL expression of a subject's reference in `columns` (its table's `.c`): the
    reference column, or a statement line's id as text."""
    if subject is Subject.STATEMENT_LINE:
        return cast(columns.id, String)
    return columns.reference


def subject_reference(session: Session, subject: Subject, subject_id: int) -> str:
    """The reference the subject is named by (`subject_key`): a transfer's or collection's
    merchant reference, a statement line's id."""
    if subject is Subject.STATEMENT_LINE:
        return str(subject_id)
    table = BOOK_MODELS[subject].__table__  # type: ignore[union-attr]
    return str(
        session.execute(select(table.c.reference).where(table.c.id == subject_id)).scalar_one()
    )


def subject_key(subject: Subject | str, reference: str) -> str:
    """A subject's key: `transfer:T-1` (the audit log's `subject`, the relay's order key)."""
    return f"{Subject(subject).value}:{reference}"


@dataclass(frozen=True, slots=True)
class SubjectRef:
    """One subject: its kind, row id and reference."""

    subject: Subject
    id: int
    reference: str

    @property
    def key(self) -> str:
        """`kind:REFERENCE`, the one way a subject is named (`subject_key`)."""
        return subject_key(self.subject, self.reference)

    @property
    def kind(self) -> str:
        """The subject's name as stored (`transfer`, `collection`)."""
        return self.subject.value


def subject_of(row: Transfer | Collection | StatementLine) -> SubjectRef:
    """The subject a transfer, collection or statement line row is."""
    assert row.id is not None
    if isinstance(row, StatementLine):
        return SubjectRef(Subject.STATEMENT_LINE, row.id, str(row.id))
    kind = Subject.COLLECTION if isinstance(row, Collection) else Subject.TRANSFER
    return SubjectRef(kind, row.id, row.reference)


def about(columns: Any, subject: Subject, subject_id: Any) -> ColumnElement[bool]:
    """`columns` (a table's `.c` holding `subject`, `subject_id`) are about that subject: a
    join or filter condition served by the `(subject, subject_id, …)` indexes."""
    return and_(columns.subject == subject.value, columns.subject_id == subject_id)


def find_by_reference(
    session: Session, model: type[Row], reference: str, *, for_update: bool = False
) -> Row | None:
    """The row of `model` whose merchant's or provider's reference is `reference`.

    A merchant's reference wins over a provider's reference that happens to be equal: the
    merchant chose it, and it is the key every surface shows.
    """
    statement = select(model).where(
        or_(col(model.reference) == reference, col(model.provider_reference) == reference)
    )
    if for_update:
        statement = statement.with_for_update()
    rows: list[Row] = list(session.execute(statement).scalars().all())
    for row in rows:
        if row.reference == reference:
            return row
    return rows[0] if rows else None


def checkable_row(*, now: Any, next_check_at: dt.datetime | None, **values: Any) -> dict[str, Any]:
    """The columns of a new transfer or collection, `values` on top of what every new
    checkable row starts with: pending and unconfirmed, never looked up, no events yet, due
    for its first lookup at `next_check_at` (None: not until something makes it due).

    `now` is whatever the writer binds as a time (a datetime, or a bulk writer's stamp).
    """
    return {
        "status": TransferStatus.PENDING.value,
        "confirmed": False,
        "check_attempts": 0,
        "not_found_count": 0,
        "event_sequence": 0,
        "next_check_at": next_check_at,
        "created_at": now,
        "updated_at": now,
        **values,
    }
