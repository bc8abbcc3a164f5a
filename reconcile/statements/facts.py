"""The ledger's rows as the pure matcher and tie-out see them (`statements.facts`), and the
index-backed queries that find them: subjects by reference key, subjects and open lines by
amount and date, the lines already matched to a subject."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import ColumnElement, or_, select, text
from sqlmodel import Session, col

from ledger.models import Collection, StatementAccount, StatementLine, Transfer
from reconcile.reports.period import lagos_day
from statements.facts import (
    AccountKind,
    IgnoreType,
    LineMatch,
    LineRole,
    LineState,
    Subject,
    SubjectKind,
    SubjectRef,
    SubjectStatus,
)
from statements.facts import StatementLine as LineFact
from statements.lines import Direction

# An amount shared by more subjects than this within the window is no suggestion anyway (a
# suggestion needs exactly one candidate): the amount-and-date query stops there.
MAX_AMOUNT_CANDIDATES = 5_000

TRANSFER_COLUMNS: tuple[Any, ...] = (
    Transfer.id,
    Transfer.reference,
    Transfer.provider_reference,
    Transfer.amount,
    Transfer.provider_amount,
    Transfer.fee,
    Transfer.provider_fee,
    Transfer.webhook_fee,
    Transfer.status,
    Transfer.initiation,
    Transfer.created_at,
)
COLLECTION_COLUMNS: tuple[Any, ...] = (
    Collection.id,
    Collection.reference,
    Collection.provider_reference,
    Collection.amount,
    Collection.amount_paid,
    Collection.fee,
    Collection.provider_fee,
    Collection.status,
    Collection.paid_at,
    Collection.confirmed_at,
    Collection.created_at,
)
LINE_COLUMNS: tuple[Any, ...] = (
    StatementLine.id,
    StatementLine.account_id,
    StatementLine.date,
    StatementLine.amount,
    StatementLine.direction,
    StatementLine.reference,
    StatementLine.narration,
    StatementLine.state,
    StatementLine.transfer_id,
    StatementLine.collection_id,
    StatementLine.other_line_id,
    StatementLine.role,
    StatementLine.ignored_as,
    StatementLine.balance,
)


def _status(value: str | None) -> SubjectStatus:
    try:
        return SubjectStatus(value or "pending")
    except ValueError:
        return SubjectStatus.PENDING


def transfer_subject(row: Sequence[Any]) -> Subject:
    """A transfer row (TRANSFER_COLUMNS) as the matcher's subject. The fee is the one
    charged: the provider's, else the webhook's, else the quote; a payout the provider
    refused moved nothing, so it is a failed transfer without a fee."""
    (_, reference, provider_reference, amount, provider_amount, fee, provider_fee, webhook_fee,
     status, initiation, created_at) = row  # fmt: skip
    charged = next((f for f in (provider_fee, webhook_fee, fee) if f is not None), 0)
    if initiation == "rejected":
        charged = 0
    return Subject(
        kind=SubjectKind.TRANSFER,
        reference=reference,
        provider_reference=provider_reference,
        amount=amount if amount is not None else (provider_amount or 0),
        fee=charged,
        status=_status(status),
        date=lagos_day(created_at),
    )


def collection_subject(row: Sequence[Any]) -> Subject:
    """A collection row (COLLECTION_COLUMNS) as the matcher's subject, dated the day it was
    paid (else confirmed, else created)."""
    (_, reference, provider_reference, amount, amount_paid, fee, provider_fee, status, paid_at,
     confirmed_at, created_at) = row  # fmt: skip
    charged = next((f for f in (provider_fee, fee) if f is not None), 0)
    return Subject(
        kind=SubjectKind.COLLECTION,
        reference=reference,
        provider_reference=provider_reference,
        amount=amount,
        fee=charged,
        status=_status(status),
        date=lagos_day(paid_at or confirmed_at or created_at),
        amount_paid=amount_paid,
    )


@dataclass
class Subjects:
    """Subjects loaded from the ledger, with their row ids both ways."""

    facts: dict[SubjectRef, Subject] = field(default_factory=dict)
    ids: dict[SubjectRef, int] = field(default_factory=dict)
    refs: dict[tuple[SubjectKind, int], SubjectRef] = field(default_factory=dict)

    def add(self, kind: SubjectKind, row_id: int, subject: Subject) -> None:
        """Keep one subject (the first one loaded wins; they are the same row)."""
        if subject.ref not in self.facts:
            self.facts[subject.ref] = subject
            self.ids[subject.ref] = row_id
            self.refs[(kind, row_id)] = subject.ref

    def merge(self, other: Subjects) -> None:
        """Take every subject of `other` this one does not have yet."""
        for ref, subject in other.facts.items():
            self.add(ref.kind, other.ids[ref], subject)

    def ids_of(self, kind: SubjectKind) -> list[int]:
        """The row ids of the subjects of `kind`."""
        return [row_id for ref, row_id in self.ids.items() if ref.kind is kind]


def in_json(
    session: Session, column: str, values: Iterable[object], name: str, *, integers: bool = False
) -> Any:
    """`column IN values` with one JSON parameter, read by the database, so the statement's
    text (and plan) is the same for any number of values and the column's index is used."""
    payload = orjson.dumps(list(values)).decode()
    if session.get_bind().dialect.name == "postgresql":
        element = f"json_array_elements_text(CAST(:{name} AS json))"
        if integers:
            element = f"CAST({element} AS bigint)"
        clause = f"{column} = ANY(ARRAY(SELECT {element}))"
    else:
        clause = f"{column} IN (SELECT value FROM json_each(:{name}))"  # noqa: S608
    # `column` is always one of this module's constants, never text from outside.
    return text(clause).bindparams(**{name: payload})


# The subjects' columns as the driver reads them (TRANSFER_COLUMNS, COLLECTION_COLUMNS):
# a batch of lines names thousands of subjects, and SQLAlchemy's row processing cost more
# than the query (docs/architecture.md: bulk paths go to the driver).
_DRIVER_COLUMNS = {
    "transfer": ", ".join(column.key for column in TRANSFER_COLUMNS),
    "collection": ", ".join(column.key for column in COLLECTION_COLUMNS),
}


def _instant(value: Any) -> Any:
    """A stored time as `ledger.types.UTCDateTime` reads it (SQLite: naive UTC text)."""
    if value is None:
        return None
    parsed: dt.datetime = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def _transfer_row(row: Sequence[Any]) -> Subject:
    return transfer_subject((*row[:10], _instant(row[10])))


def _collection_row(row: Sequence[Any]) -> Subject:
    return collection_subject((*row[:8], *(_instant(value) for value in row[8:11])))


def _load_keyed(
    session: Session, subjects: Subjects, table: str, column: str, values: Sequence[Any]
) -> None:
    """Add the subjects of `table` whose `column` is one of `values`, read through the
    driver as plain tuples (one JSON parameter: the statement's text and plan are the same
    for any number of values, and the column's index is used)."""
    connection = session.connection()
    postgres = connection.dialect.name == "postgresql"
    payload = orjson.dumps(list(values)).decode()
    if postgres:
        cast = "" if column in {"reference_key", "provider_reference_key"} else "::bigint"
        condition = f"{column} = ANY(ARRAY(SELECT json_array_elements_text(%s::json){cast}))"
    else:
        condition = f"{column} IN (SELECT value FROM json_each(?))"  # noqa: S608
    # `table` and `column` are always this module's constants, never text from outside.
    sql = f"SELECT {_DRIVER_COLUMNS[table]} FROM {table} WHERE {condition}"  # noqa: S608
    kind, build = (
        (SubjectKind.TRANSFER, _transfer_row)
        if table == "transfer"
        else (SubjectKind.COLLECTION, _collection_row)
    )
    refs = subjects.refs
    # fetchall: one call to the driver for the whole answer, not one per row.
    for row in connection.exec_driver_sql(sql, (payload,)).fetchall():
        if (kind, row[0]) not in refs:  # the same row found by its other reference
            subjects.add(kind, row[0], build(row))


def subjects_by_keys(session: Session, keys: Iterable[str]) -> Subjects:
    """The transfers and collections whose reference or provider reference, upper-cased, is
    one of `keys` (the generated `*_key` columns and their indexes, migration 0007)."""
    keys = sorted(set(keys))
    subjects = Subjects()
    if not keys:
        return subjects
    for table in ("transfer", "collection"):
        if not _has_rows(session, table):
            continue  # (a ledger without collections: thousands of keys not sent for nothing)
        for column in ("reference_key", "provider_reference_key"):
            _load_keyed(session, subjects, table, column, keys)
    return subjects


def _has_rows(session: Session, table: str) -> bool:
    # `table` is always one of this module's constants.
    sql = f"SELECT 1 FROM {table} LIMIT 1"  # noqa: S608
    return session.connection().exec_driver_sql(sql).first() is not None


def subjects_by_ids(
    session: Session, transfer_ids: Iterable[int], collection_ids: Iterable[int]
) -> Subjects:
    """The transfers and collections with these row ids."""
    subjects = Subjects()
    if transfers := sorted(set(transfer_ids)):
        _load_keyed(session, subjects, "transfer", "id", transfers)
    if collections := sorted(set(collection_ids)):
        _load_keyed(session, subjects, "collection", "id", collections)
    return subjects


def subjects_by_amounts(
    session: Session, amounts: Iterable[int], since: dt.date, until: dt.date
) -> Subjects:
    """Transfers and collections created in [since, until] (Lagos days, a day's slack each
    side for the time zone) one of whose expected figures may be one of `amounts`: the
    candidates of step 2 (by amount and date), read through the creation-time indexes."""
    wanted = sorted(set(amounts))
    subjects = Subjects()
    if not wanted:
        return subjects
    start = dt.datetime.combine(since - dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    end = dt.datetime.combine(until + dt.timedelta(days=2), dt.time(), tzinfo=dt.UTC)
    fee = "coalesce(transfer.provider_fee, transfer.webhook_fee, transfer.fee, 0)"
    transfer_where = (
        col(Transfer.created_at).between(start, end),
        or_(
            in_json(session, "transfer.amount", wanted, "a", integers=True),
            in_json(session, f"transfer.amount + {fee}", wanted, "b", integers=True),
            in_json(session, fee, wanted, "c", integers=True),
        ),
    )
    collection_where = (
        col(Collection.created_at).between(start - dt.timedelta(days=30), end),
        col(Collection.status) == "successful",
    )
    for columns, where, build, kind in (
        (TRANSFER_COLUMNS, transfer_where, transfer_subject, SubjectKind.TRANSFER),
        (COLLECTION_COLUMNS, collection_where, collection_subject, SubjectKind.COLLECTION),
    ):
        statement = select(*columns).where(*where).limit(MAX_AMOUNT_CANDIDATES)
        for row in session.execute(statement):
            subjects.add(kind, row[0], build(row))
    return subjects


@dataclass(frozen=True)
class Accounts:
    """Every statement account: kind and name by id."""

    kinds: dict[int, AccountKind]
    names: dict[int, str]


def load_accounts(session: Session) -> Accounts:
    """The statement accounts (a handful of rows)."""
    columns: tuple[Any, ...] = (StatementAccount.id, StatementAccount.name, StatementAccount.kind)
    rows = session.execute(select(*columns))
    kinds: dict[int, AccountKind] = {}
    names: dict[int, str] = {}
    for row_id, name, kind in rows:
        kinds[row_id], names[row_id] = AccountKind(kind), name
    return Accounts(kinds, names)


def line_fact(row: Sequence[Any], accounts: Accounts, subjects: Subjects) -> LineFact:
    """A stored line (LINE_COLUMNS) as the matcher and the tie-out see it; its match names
    its subject by reference (`subjects` must hold it)."""
    (row_id, account_id, date, amount, direction, reference, narration, state, transfer_id,
     collection_id, other_line_id, role, ignored_as, balance) = row  # fmt: skip
    match: LineMatch | None = None
    subject: SubjectRef | None = None
    if transfer_id is not None:
        subject = subjects.refs.get((SubjectKind.TRANSFER, transfer_id))
    elif collection_id is not None:
        subject = subjects.refs.get((SubjectKind.COLLECTION, collection_id))
    if subject is not None or other_line_id is not None:
        match = LineMatch(
            subject=subject,
            role=LineRole(role) if role else None,
            line=other_line_id,
        )
    return LineFact(
        id=row_id,
        account=accounts.names[account_id],
        account_kind=accounts.kinds[account_id],
        date=date,
        amount=amount,
        direction=Direction(direction),
        reference=reference,
        narration=narration,
        state=LineState(state),
        match=match,
        ignored_as=IgnoreType(ignored_as) if ignored_as else None,
        balance=balance,
    )


def line_rows(session: Session, *where: ColumnElement[bool] | Any) -> list[tuple[Any, ...]]:
    """Stored lines (LINE_COLUMNS) meeting every condition of `where`."""
    return [tuple(row) for row in session.execute(select(*LINE_COLUMNS).where(*where))]


def subject_line_rows(session: Session, subjects: Subjects) -> list[tuple[Any, ...]]:
    """The lines matched or suggested to any of `subjects` (their transfer and collection
    indexes)."""
    rows: list[tuple[Any, ...]] = []
    for kind, column in (
        (SubjectKind.TRANSFER, "statement_line.transfer_id"),
        (SubjectKind.COLLECTION, "statement_line.collection_id"),
    ):
        if ids := subjects.ids_of(kind):
            rows += line_rows(session, in_json(session, column, ids, "ids", integers=True))
    return rows


def open_line_rows(
    session: Session, amounts: Iterable[int], since: dt.date, until: dt.date
) -> list[tuple[Any, ...]]:
    """Unmatched and suggested lines of any account with one of `amounts` dated in
    [since, until] (the amount-and-date index): the other side of a funding or settlement
    pair, and the lines competing for the same candidate. Lines unmatched by hand are left
    alone."""
    wanted = sorted(set(amounts))
    if not wanted:
        return []
    return line_rows(
        session,
        in_json(session, "statement_line.amount", wanted, "amounts", integers=True),
        col(StatementLine.date).between(since, until),
        col(StatementLine.state).in_(("unmatched", "suggested")),
        col(StatementLine.matched_by).is_(None),  # a line unmatched by hand stays so
    )
