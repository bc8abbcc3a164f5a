"""Builders of statement lines and ledger subjects for the statements tests."""

from __future__ import annotations

import datetime as dt

from statements.facts import (
    AccountKind,
    LineMatch,
    LineRole,
    LineState,
    StatementLine,
    Subject,
    SubjectKind,
    SubjectRef,
    SubjectStatus,
)
from statements.lines import Direction

DAY = dt.date(2026, 3, 10)
DEBIT, CREDIT = Direction.DEBIT, Direction.CREDIT


def transfer(
    reference: str = "ORD-1001",
    *,
    provider_reference: str | None = "PSP-900001",
    amount: int = 500_000,
    fee: int = 2_500,
    status: SubjectStatus = SubjectStatus.SUCCESSFUL,
    date: dt.date = DAY,
    reversed_on: dt.date | None = None,
) -> Subject:
    return Subject(
        SubjectKind.TRANSFER,
        reference,
        provider_reference,
        amount,
        fee,
        status,
        date,
        reversed_on=reversed_on,
    )


def collection(
    reference: str = "COL-2001",
    *,
    provider_reference: str | None = "PSC-700001",
    amount: int = 1_000_000,
    amount_paid: int | None = None,
    fee: int = 10_000,
    status: SubjectStatus = SubjectStatus.SUCCESSFUL,
    date: dt.date = DAY,
) -> Subject:
    return Subject(
        SubjectKind.COLLECTION,
        reference,
        provider_reference,
        amount,
        fee,
        status,
        date,
        amount_paid=amount_paid,
    )


def line(
    id: int,
    amount: int,
    direction: Direction = DEBIT,
    *,
    reference: str = "",
    narration: str = "",
    date: dt.date = DAY,
    kind: AccountKind = AccountKind.WALLET,
    state: LineState = LineState.UNMATCHED,
    match: LineMatch | None = None,
    balance: int | None = None,
    **changes: object,
) -> StatementLine:
    account = "provider-wallet" if kind is AccountKind.WALLET else "gtbank"
    return StatementLine(
        id,
        account,
        kind,
        date,
        amount,
        direction,
        reference,
        narration,
        state,
        match,
        balance=balance,
        **changes,  # type: ignore[arg-type]
    )


def matched_to(subject: Subject, role: LineRole) -> LineMatch:
    return LineMatch(subject=SubjectRef(subject.kind, subject.reference), role=role)
