"""What the console shows of statements: the accounts with their lines counted by state, the
imports of an account newest first, and the count and sum of an account's lines by state
(docs/rules.md "Statements and period tie-out"). Index-backed reads; nothing is changed."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlmodel import Session, col

from ledger.models import PeriodLock, StatementAccount, StatementImport, StatementLine
from ledger.statement_lines import LINE_STATES, find_account

# Imports shown on the console page: the newest of the account.
MAX_IMPORTS = 20


@dataclass(frozen=True)
class StateTotal:
    """Lines in one state: how many, and their amounts summed (kobo, always positive)."""

    count: int = 0
    amount: int = 0


@dataclass(frozen=True)
class AccountView:
    """An account with its lines by state (every state of LINE_STATES, zero when none)."""

    id: int
    name: str
    kind: str
    states: dict[str, StateTotal]

    @property
    def lines(self) -> int:
        """Every line of the account."""
        return sum(total.count for total in self.states.values())


def state_totals(
    session: Session,
    account_id: int,
    *,
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> dict[str, StateTotal]:
    """The account's lines dated in [since, until] counted and summed by state (the state
    index)."""
    statement = (
        select(StatementLine.state, func.count(), func.coalesce(func.sum(StatementLine.amount), 0))  # type: ignore[call-overload]
        .where(col(StatementLine.account_id) == account_id)
        .group_by(col(StatementLine.state))
    )
    if since is not None:
        statement = statement.where(col(StatementLine.date) >= since)
    if until is not None:
        statement = statement.where(col(StatementLine.date) <= until)
    found = {row[0]: StateTotal(int(row[1]), int(row[2])) for row in session.execute(statement)}
    return {state: found.get(state, StateTotal()) for state in LINE_STATES}


def list_accounts(session: Session) -> list[AccountView]:
    """Every statement account by name, with its lines by state."""
    accounts = session.execute(
        select(StatementAccount).order_by(col(StatementAccount.name))
    ).scalars()
    return [
        AccountView(row.id, row.name, row.kind, state_totals(session, row.id))
        for row in accounts
        if row.id is not None
    ]


def list_imports(
    session: Session, account_id: int, *, limit: int = MAX_IMPORTS
) -> list[StatementImport]:
    """The account's newest imports first."""
    return list(
        session.execute(
            select(StatementImport)
            .where(col(StatementImport.account_id) == account_id)
            .order_by(col(StatementImport.id).desc())
            .limit(limit)
        ).scalars()
    )


def period_locks(
    session: Session, account: str, since: dt.date, until: dt.date
) -> list[PeriodLock]:
    """The locks recorded for exactly this period of the account, oldest first."""
    found = find_account(session, account)
    if found is None:
        return []
    return list(
        session.execute(
            select(PeriodLock)
            .where(
                col(PeriodLock.account_id) == found.id,
                col(PeriodLock.since) == since,
                col(PeriodLock.until) == until,
            )
            .order_by(col(PeriodLock.id))
        ).scalars()
    )
