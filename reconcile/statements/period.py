"""The period tie-out read from the ledger, and `period close` (docs/rules.md "Period tie-out";
docs/statements.md "Closing a period"): the period's sums from the database
(`reconcile.statements.periodsums`), and its exceptions — unmatched and suggested lines, and
the subjects whose lines do not show what the ledger expects — tied out by the pure
`statements.tieout`."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Date, bindparam, select, text
from sqlmodel import Session, col

from ledger.models import PeriodLock, StatementLine
from ledger.statement_lines import find_account
from reconcile.statements.errors import AccountError
from reconcile.statements.facts import (
    LINE_COLUMNS,
    Subjects,
    line_fact,
    load_accounts,
    subjects_by_ids,
)
from reconcile.statements.periodsums import BOUNDARY, exception_line_sql, period_sums
from statements.expected import Movement
from statements.facts import AccountKind, LineState, SubjectKind, SubjectRef
from statements.facts import StatementLine as LineFact
from statements.tieout import BalanceGap, MovementMismatch, TieOut, tie_subject

# The days a period may start and end on (docs/rules.md "Period tie-out"): the tie-out reads
# BOUNDARY days either side of the period, so both ends stay well inside the calendar's range.
# Every entry (API, CLI, console) refuses other days through `admin.actions.statements`.
EARLIEST_DAY = dt.date(1900, 1, 1)
LATEST_DAY = dt.date(9000, 12, 31)


@dataclass(frozen=True)
class Closed:
    """A period closed: its tie-out, and the lock recorded (None without `--lock`)."""

    tie_out: TieOut
    lock_id: int | None


# Ids per statement: SQLite takes at most 32,766 parameters.
_CHUNK = 10_000


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


def _subjects(session: Session, keys: Iterable[tuple[str, int]]) -> Subjects:
    transfers = sorted({row_id for kind, row_id in keys if kind == SubjectKind.TRANSFER})
    collections = sorted({row_id for kind, row_id in keys if kind == SubjectKind.COLLECTION})
    subjects = Subjects()
    for chunk in _chunks(transfers):
        subjects.merge(subjects_by_ids(session, chunk, ()))
    for chunk in _chunks(collections):
        subjects.merge(subjects_by_ids(session, (), chunk))
    return subjects


def _matched_rows(
    session: Session, account_id: int, keys: list[tuple[str, int]], since: dt.date, until: dt.date
) -> list[tuple[Any, ...]]:
    """The account's matched lines dated in [since, until] of the subjects `keys`."""
    rows: list[tuple[Any, ...]] = []
    for kind, column in (
        (SubjectKind.TRANSFER, StatementLine.transfer_id),
        (SubjectKind.COLLECTION, StatementLine.collection_id),
    ):
        ids = sorted({row_id for k, row_id in keys if k == kind})
        for chunk in _chunks(ids):
            statement = (
                select(*LINE_COLUMNS)
                .where(
                    col(StatementLine.account_id) == account_id,
                    col(StatementLine.state) == "matched",
                    col(column).in_(chunk),
                    col(StatementLine.date).between(since, until),
                )
                .order_by(
                    col(StatementLine.date),
                    col(StatementLine.import_id),
                    col(StatementLine.position),
                )
            )
            rows += [tuple(row) for row in session.execute(statement)]
    return rows


def period_tie_out(session: Session, account: str, since: dt.date, until: dt.date) -> TieOut:
    """Tie out `account` over [since, until]; AccountError when there is no such account.

    The figures are summed in the database (`reconcile.statements.periodsums`); the lines and
    subjects that explain a residual are read and tied out by the pure
    `statements.tieout.tie_subject`, so the result is `statements.tieout.tie_out`'s over
    every line and subject of the period."""
    found = find_account(session, account)
    if found is None or found.id is None:
        raise AccountError(f"no statement account {account!r}: import a statement first")
    accounts = load_accounts(session)
    wallet = accounts.kinds[found.id] is AccountKind.WALLET
    sums = period_sums(session, found.id, since, until, wallet=wallet)
    exception_rows = [
        tuple(row)
        for row in session.execute(
            text(exception_line_sql(", ".join(c.name for c in LINE_COLUMNS)))
            .bindparams(
                bindparam("account", found.id),
                bindparam("since", since, type_=Date()),
                bindparam("until", until, type_=Date()),
            )
            .columns(*LINE_COLUMNS)
        )
    ]
    named = [("transfer", r[8]) for r in exception_rows if r[8] is not None]
    named += [("collection", r[9]) for r in exception_rows if r[9] is not None]
    subjects = _subjects(session, [*sums.unclean, *sums.referenced, *named])
    # The lines the pure tie-out sees of each subject: those of the period, and for the
    # period's own subjects those within BOUNDARY of it (they say when a movement happened).
    rows = _matched_rows(session, found.id, sums.unclean, since - BOUNDARY, until + BOUNDARY)
    rows += _matched_rows(session, found.id, sums.referenced, since, until)
    by_subject: dict[SubjectRef, list[LineFact]] = defaultdict(list)
    for row in rows:
        fact = line_fact(row, accounts, subjects)
        if fact.match is not None and fact.match.subject is not None:
            by_subject[fact.match.subject].append(fact)
    ledger = sums.own_movement + sums.subject_lines
    missing: list[Movement] = []
    mismatches: list[MovementMismatch] = []
    one_by_one = {subjects.refs[(SubjectKind(k), i)] for k, i in [*sums.unclean, *sums.referenced]}
    for ref in sorted(one_by_one, key=lambda r: (r.kind, r.reference)):
        lines = by_subject.get(ref, [])
        # Their lines of the period were summed as the ledger's; their tie replaces that.
        ledger -= sum(line.signed_amount for line in lines if since <= line.date <= until)
        tied = tie_subject(ref, subjects.facts[ref], lines, since, until)
        ledger += tied.ledger
        missing += tied.missing
        mismatches += tied.mismatches
    facts = [line_fact(row, accounts, subjects) for row in exception_rows]
    opening, closing = sums.opening_balance, sums.closing_balance
    if not sums.lines:
        opening = closing = _last_balance(session, found.id, since)
    return TieOut(
        account=account,
        since=since,
        until=until,
        opening_balance=opening,
        closing_balance=closing,
        credits=sums.credits,
        debits=sums.debits,
        ledger_movement=ledger,
        matched_count=sums.matched_count,
        matched_amount=sums.matched_amount,
        suggested_lines=tuple(f for f in facts if f.state is LineState.SUGGESTED),
        unmatched_lines=tuple(f for f in facts if f.state is not LineState.SUGGESTED),
        missing_from_statement=tuple(missing),
        mismatches=tuple(mismatches),
        balance_gaps=tuple(BalanceGap(*gap) for gap in sums.gaps),
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
