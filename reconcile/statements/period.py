"""The period tie-out read from the ledger, and `period close` (PRODUCT.md "Period tie-out";
docs/statements.md "Closing a period"): the account's lines of the period in statement order,
the transfers and collections of the period and those its lines are matched to, and the
statement's balances around it, handed to the pure `statements.tieout.tie_out`."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.models import Collection, PeriodLock, StatementLine, Transfer
from ledger.statement_lines import find_account
from reconcile.reports.period import lagos_midnight_utc
from reconcile.statements.errors import AccountError
from reconcile.statements.facts import (
    COLLECTION_COLUMNS,
    LINE_COLUMNS,
    TRANSFER_COLUMNS,
    Subjects,
    collection_subject,
    line_fact,
    load_accounts,
    subjects_by_ids,
    transfer_subject,
)
from statements.facts import AccountKind, SubjectKind
from statements.tieout import TieOut, tie_out

# A line dated this far outside the period can still show a movement of one of its subjects
# (a payout made on the 31st and debited on the 1st).
BOUNDARY = dt.timedelta(days=7)


@dataclass(frozen=True)
class Closed:
    """A period closed: its tie-out, and the lock recorded (None without `--lock`)."""

    tie_out: TieOut
    lock_id: int | None


def _ordered(session: Session, account_id: int, since: dt.date, until: dt.date) -> list[tuple]:  # type: ignore[type-arg]
    statement = (
        select(*LINE_COLUMNS)
        .where(
            col(StatementLine.account_id) == account_id,
            col(StatementLine.date).between(since, until),
        )
        .order_by(
            col(StatementLine.date),
            col(StatementLine.import_id),
            col(StatementLine.position),
        )
    )
    return [tuple(row) for row in session.execute(statement)]


def _period_subjects(session: Session, since: dt.date, until: dt.date) -> Subjects:
    """The transfers and collections dated in the period (Lagos days)."""
    start, end = lagos_midnight_utc(since), lagos_midnight_utc(until + dt.timedelta(days=1))
    subjects = Subjects()
    for row in session.execute(
        select(*TRANSFER_COLUMNS).where(
            col(Transfer.created_at) >= start, col(Transfer.created_at) < end
        )
    ):
        subjects.add(SubjectKind.TRANSFER, row[0], transfer_subject(row))
    # A collection is dated the day it was paid: one paid in the period was created before.
    for row in session.execute(
        select(*COLLECTION_COLUMNS).where(
            col(Collection.created_at) >= start - dt.timedelta(days=60),
            col(Collection.created_at) < end,
        )
    ):
        subject = collection_subject(row)
        if since <= subject.date <= until:
            subjects.add(SubjectKind.COLLECTION, row[0], subject)
    return subjects


def period_tie_out(session: Session, account: str, since: dt.date, until: dt.date) -> TieOut:
    """Tie out `account` over [since, until]; AccountError when there is no such account."""
    found = find_account(session, account)
    if found is None or found.id is None:
        raise AccountError(f"no statement account {account!r}: import a statement first")
    accounts = load_accounts(session)
    rows = _ordered(session, found.id, since, until)
    wallet = accounts.kinds[found.id] is AccountKind.WALLET
    subjects = _period_subjects(session, since, until) if wallet else Subjects()
    # Lines just outside the period matched to the period's subjects say when they moved.
    near = _ordered(session, found.id, since - BOUNDARY, since - dt.timedelta(days=1))
    near += _ordered(session, found.id, until + dt.timedelta(days=1), until + BOUNDARY)
    transfer_ids = set(subjects.ids_of(SubjectKind.TRANSFER))
    collection_ids = set(subjects.ids_of(SubjectKind.COLLECTION))
    near = [r for r in near if r[8] in transfer_ids or r[9] in collection_ids]
    missing_t = {r[8] for r in rows if r[8] is not None} - transfer_ids
    missing_c = {r[9] for r in rows if r[9] is not None} - collection_ids
    if missing_t or missing_c:
        subjects.merge(subjects_by_ids(session, missing_t, missing_c))
    facts = [line_fact(row, accounts, subjects) for row in rows]
    opening = closing = 0
    if facts:
        first, last = facts[0], facts[-1]
        if first.balance is not None:
            opening = first.balance - first.signed_amount
        closing = (
            last.balance
            if last.balance is not None
            else opening + sum(line.signed_amount for line in facts)
        )
    else:
        before = _last_balance(session, found.id, since)
        opening = closing = before
    return tie_out(
        account=account,
        since=since,
        until=until,
        opening_balance=opening,
        closing_balance=closing,
        lines=[*facts, *(line_fact(row, accounts, subjects) for row in near)],
        subjects=subjects.facts.values(),
    )


def _last_balance(session: Session, account_id: int, before: dt.date) -> int:
    row = session.execute(
        select(StatementLine.balance)  # type: ignore[call-overload]
        .where(col(StatementLine.account_id) == account_id, col(StatementLine.date) < before)
        .order_by(
            col(StatementLine.date).desc(),
            col(StatementLine.import_id).desc(),
            col(StatementLine.position).desc(),
        )
        .limit(1)
    ).first()
    return 0 if row is None or row[0] is None else int(row[0])


def close_period(
    session: Session,
    account: str,
    since: dt.date,
    until: dt.date,
    *,
    lock: bool,
    actor: str,
    now: dt.datetime,
) -> Closed:
    """The tie-out of the period, and with `lock` a `period_lock` row holding it as it stood
    (an import that later adds lines to the period is recorded against the lock)."""
    result = period_tie_out(session, account, since, until)
    if not lock:
        return Closed(result, None)
    found = find_account(session, account)
    assert found is not None and found.id is not None  # period_tie_out found it
    row = PeriodLock(
        account_id=found.id,
        since=since,
        until=until,
        locked_by=actor,
        locked_at=now,
        snapshot=json.dumps(result.to_json()),
    )
    session.add(row)
    session.flush()
    return Closed(result, row.id)
