"""SQL expressions shared by the summary and the per-transfer rows (both dialects)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Date, Integer, case, cast, func, literal_column, select
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session

from ledger.figures import (
    collection_amount_sql,
    collection_fee_sql,
    transfer_amount_sql,
    transfer_fee_sql,
)
from ledger.models import Collection, Finding, Transfer
from reconcile.reports.period import Period

T = Transfer.__table__.c  # type: ignore[attr-defined]
C = Collection.__table__.c  # type: ignore[attr-defined]
F = Finding.__table__.c  # type: ignore[attr-defined]
# Each source's figures for one transfer, named as `advice.Figures` reads them.
FIGURE_COLUMNS = (
    T.amount,
    T.fee,
    T.webhook_amount,
    T.webhook_fee,
    T.provider_amount,
    T.provider_fee,
)


def counted_amount() -> ColumnElement[Any]:
    """The amount that moved: the provider's figure, else the webhook's, else the expected one
    (the one figure rule, `ledger.figures`)."""
    return transfer_amount_sql(T)


def counted_fee() -> ColumnElement[Any]:
    """The fee charged: the provider's, else the webhook's, else the quote at initiation."""
    return transfer_fee_sql(T)


def collection_amount() -> ColumnElement[Any]:
    """A collection's money: what the provider says was paid, else the amount asked for."""
    return collection_amount_sql(C)


def collection_fee() -> ColumnElement[Any]:
    """A collection's fee: charged (provider) when known, none on a failed one, else the quote."""
    return collection_fee_sql(C)


def lagos_date(dialect: str) -> ColumnElement[Any]:
    """The Africa/Lagos calendar day of `transfer.created_at`, computed in the database.

    Lagos is UTC+1 all year (West Africa Time, no daylight saving since 1919), so adding one
    hour to the UTC instant and taking the date is exact; see `period.lagos_offset_is_fixed`.
    Constants are literal SQL rather than bound parameters: PostgreSQL cannot tell that two
    separately bound copies in SELECT and GROUP BY are the same expression.
    """
    if dialect == "sqlite":
        # Stored as naive UTC text 'YYYY-MM-DD HH:MM:SS.ffffff'. Cut to whole seconds first:
        # SQLite's date functions round to the millisecond, so 22:59:59.9999 UTC would round
        # up into the next Lagos day; truncation keeps the instant on the right side.
        whole_seconds = func.substr(T.created_at, literal_column("1"), literal_column("19"))
        return func.date(whole_seconds, literal_column("'+1 hour'"))
    # timestamptz → UTC wall time first, so the session's TimeZone setting cannot shift it.
    utc_wall = func.timezone(literal_column("'UTC'"), T.created_at)
    return cast(utc_wall.op("+")(literal_column("interval '1 hour'")), Date)


def in_period(period: Period, table: Any = T) -> list[ColumnElement[bool]]:
    """WHERE conditions for transfers (or the rows of `table`, e.g. `C`) created inside the
    period (half-open UTC bounds)."""
    conditions: list[ColumnElement[bool]] = []
    if period.start is not None:
        conditions.append(table.created_at >= period.start)
    if period.end is not None:
        conditions.append(table.created_at < period.end)
    return conditions


def dialect_of(session: Session) -> str:
    """The dialect name of the session's database (`sqlite` or `postgresql`)."""
    return session.get_bind().dialect.name


def as_int(value: Any) -> int:
    """A SUM result as int: PostgreSQL answers Decimal for bigint sums, NULL for no rows."""
    return 0 if value is None else int(value)


def flag(condition: ColumnElement[bool]) -> ColumnElement[Any]:
    """1 where the condition holds, else 0, for counting with SUM."""
    return cast(case((condition, 1), else_=0), Integer)


def finding_counts(
    session: Session, subjects: Any, conditions: list[ColumnElement[bool]]
) -> tuple[dict[str, int], dict[str, int]]:
    """Open findings by kind over `subjects` (findings joined to their table) where
    `conditions` hold, and how many of each are acknowledged."""
    statement = (
        select(F.kind, func.count(), func.sum(flag(F.acknowledged_at.is_not(None))))
        .select_from(subjects)
        .where(F.resolved_at.is_(None), *conditions)
        .group_by(F.kind)
    )
    opened: dict[str, int] = {}
    acknowledged: dict[str, int] = {}
    for kind, count, acked in session.execute(statement):
        opened[kind] = as_int(count)
        acknowledged[kind] = as_int(acked)
    return opened, acknowledged
