"""One row per transfer (then per collection) with its findings, streamed from a server-side
cursor in batches."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import case, func, literal_column, null, select
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session

from ledger.events.types import Subject
from ledger.models import Finding
from ledger.subjects import about
from reconcile.reports.period import Period, lagos_day
from reconcile.reports.sql import (
    FIGURE_COLUMNS,
    C,
    T,
    as_int,
    collection_amount,
    collection_fee,
    counted_amount,
    counted_fee,
    in_period,
)

BATCH = 1000
F = Finding.__table__.c  # type: ignore[attr-defined]

COLUMNS: tuple[str, ...] = (
    "type",
    "reference",
    "provider_reference",
    "origin",
    "status",
    "confirmed",
    "created_at",
    "lagos_date",
    "amount",
    "fee",
    "expected_amount",
    "quoted_fee",
    "webhook_amount",
    "webhook_fee",
    "provider_amount",
    "provider_fee",
    "failure_reason",
    "findings",
)


@dataclass(frozen=True, slots=True)
class TransferRow:
    """A transfer as the CSV and the spreadsheet show it; money in kobo."""

    reference: str
    provider_reference: str | None
    origin: str
    status: str
    confirmed: bool
    created_at: dt.datetime
    amount: int
    fee: int
    expected_amount: int | None
    quoted_fee: int | None
    webhook_amount: int | None
    webhook_fee: int | None
    provider_amount: int | None
    provider_fee: int | None
    failure_reason: str | None
    findings: str
    type: str = "transfer"  # or "collection" (docs/rules.md: the CSV's `type` column)

    @property
    def lagos_date(self) -> dt.date:
        """The Lagos day the transfer was created on."""
        return lagos_day(self.created_at)


def _findings_of(subject: Subject, row_id: ColumnElement[int]) -> ColumnElement[str]:
    # A correlated subquery answered from the (subject, subject_id, kind) unique index per
    # row, so the stream needs no join state: "fee_mismatch:open; stale_pending:acknowledged".
    state = case(
        (F.resolved_at.is_not(None), literal_column("'resolved'")),
        (F.acknowledged_at.is_not(None), literal_column("'acknowledged'")),
        else_=literal_column("'open'"),
    )
    label = F.kind + literal_column("':'") + state
    return (
        select(func.aggregate_strings(label, "; "))
        .where(about(F, subject, row_id))
        .correlate_except(Finding.__table__)  # type: ignore[attr-defined]
        .scalar_subquery()
    )


def iter_transfer_rows(
    session: Session, period: Period | None = None, *, batch: int = BATCH
) -> Iterator[TransferRow]:
    """Every transfer of the period, oldest first, fetched `batch` rows at a time.

    `yield_per` makes PostgreSQL use a server-side cursor and keeps SQLAlchemy from buffering
    the result, so memory stays constant however large the ledger is.
    """
    statement = (
        select(
            T.reference,
            T.provider_reference,
            T.origin,
            T.status,
            T.confirmed,
            T.created_at,
            counted_amount(),
            counted_fee(),
            *FIGURE_COLUMNS,
            T.failure_reason,
            _findings_of(Subject.TRANSFER, T.id),
        )
        .where(*in_period(period or Period()))
        .order_by(T.created_at, T.id)
    )
    yield from _stream(session, statement, batch, "transfer")


def _stream(session: Session, statement: Any, batch: int, type: str) -> Iterator[TransferRow]:
    """The rows of a statement selecting COLUMNS' figures in order (without `type` and
    `lagos_date`), `batch` at a time."""
    result = session.execute(statement, execution_options={"yield_per": batch})
    for row in result:
        yield TransferRow(
            reference=row[0],
            provider_reference=row[1],
            origin=row[2],
            status=row[3],
            confirmed=bool(row[4]),
            created_at=row[5],
            amount=as_int(row[6]),
            fee=as_int(row[7]),
            expected_amount=row[8],
            quoted_fee=row[9],
            webhook_amount=row[10],
            webhook_fee=row[11],
            provider_amount=row[12],
            provider_fee=row[13],
            failure_reason=row[14],
            findings=_sorted_findings(row[15]),
            type=type,
        )


def iter_collection_rows(
    session: Session, period: Period | None = None, *, batch: int = BATCH
) -> Iterator[TransferRow]:
    """Every collection of the period as a row of `type` collection, oldest first: `amount` is
    what was paid (else asked for), `expected_amount` what was asked for, `quoted_fee` the
    quote, `provider_amount`/`provider_fee` the provider's figures; no webhook figures."""
    statement = (
        select(
            C.reference,
            C.provider_reference,
            C.origin,
            C.status,
            C.confirmed,
            C.created_at,
            collection_amount(),
            collection_fee(),
            C.amount,
            C.fee,
            null(),  # the provider sends no collection webhooks
            null(),
            C.amount_paid,
            C.provider_fee,
            C.failure_reason,
            _findings_of(Subject.COLLECTION, C.id),
        )
        .where(*in_period(period or Period(), C))
        .order_by(C.created_at, C.id)
    )
    yield from _stream(session, statement, batch, "collection")


def iter_report_rows(session: Session, period: Period | None = None) -> Iterator[TransferRow]:
    """The CSV's and the spreadsheet's rows: every transfer, then every collection."""
    yield from iter_transfer_rows(session, period)
    yield from iter_collection_rows(session, period)


def _sorted_findings(value: str | None) -> str:
    # aggregate_strings has no portable ORDER BY; sort here so output is deterministic.
    if not value:
        return ""
    return "; ".join(sorted(value.split("; ")))
