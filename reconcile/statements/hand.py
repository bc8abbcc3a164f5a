"""Working lines by hand: match (or confirm a suggestion), unmatch, ignore with a type and a
note (docs/rules.md "Statements and period tie-out"). Each takes `*, session`, does not commit,
checks the change makes sense (MatchRefusedError says why not) and returns the line before
and after, for the audit row and for the operator actions that call it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select
from sqlmodel import Session, col

from ledger.errors import NoteError
from ledger.findings import check_note
from ledger.models import Collection, StatementLine, Transfer
from ledger.statement_lines import line_record
from reconcile.statements.errors import LineNotFoundError, MatchRefusedError
from reconcile.statements.facts import (
    COLLECTION_COLUMNS,
    TRANSFER_COLUMNS,
    Subjects,
    collection_subject,
    line_fact,
    load_accounts,
    subject_line_rows,
    transfer_subject,
)
from statements.expected import ledger_figure, role_direction
from statements.facts import AccountKind, IgnoreType, LineState, SubjectKind, SubjectStatus
from statements.matching import hand_role

# Without a fee to go by, a hand match may differ from the ledger's figure by this much.
MIN_TOLERANCE = 10_000  # ₦100


@dataclass(frozen=True)
class LineChange:
    """A line as it was and as it is now (JSON records, `line_record`)."""

    before: dict[str, Any]
    after: dict[str, Any]


def _line(session: Session, line_id: int) -> StatementLine:
    line = session.get(StatementLine, line_id, with_for_update=True)
    if line is None:
        raise LineNotFoundError(f"no statement line {line_id}")
    return line


def _subject(session: Session, kind: SubjectKind, reference: str) -> Subjects:
    model, columns, build = (
        (Transfer, TRANSFER_COLUMNS, transfer_subject)
        if kind is SubjectKind.TRANSFER
        else (Collection, COLLECTION_COLUMNS, collection_subject)
    )
    row = session.execute(
        select(*columns).where(
            or_(col(model.reference) == reference, col(model.provider_reference) == reference)
        )
    ).first()
    if row is None:
        raise MatchRefusedError(f"no {kind} has the reference {reference!r}")
    subjects = Subjects()
    subjects.add(kind, row[0], build(row))
    return subjects


def _open(line: StatementLine) -> None:
    if line.state == LineState.MATCHED:
        raise MatchRefusedError(f"line {line.id} is already matched: unmatch it first")
    if line.state == LineState.IGNORED:
        raise MatchRefusedError(f"line {line.id} is ignored: unmatch it first")


def match_line(
    session: Session,
    line_id: int,
    *,
    transfer: str | None = None,
    collection: str | None = None,
    other_line: int | None = None,
    actor: str,
    now: dt.datetime,
) -> LineChange:
    """Match line `line_id` to a transfer or collection (by either reference) or to a line
    of another account, or confirm its suggestion. Refused when the line is matched or
    ignored already, when the direction is not one the subject can move (a credit to a
    pending payout, a debit to a collection), when the subject's movement of that kind is
    already on the statement, or when the amount is further from the ledger's figure than
    the fee (₦100 without a fee)."""
    if sum(x is not None for x in (transfer, collection, other_line)) != 1:
        raise MatchRefusedError("give exactly one of a transfer, a collection or a line")
    line = _line(session, line_id)
    _open(line)
    before = line_record(session, line)
    if other_line is not None:
        _match_pair(session, line, other_line, actor=actor, now=now)
        return LineChange(before, line_record(session, line))
    kind = SubjectKind.TRANSFER if transfer is not None else SubjectKind.COLLECTION
    subjects = _subject(session, kind, transfer or collection or "")
    (ref,) = subjects.facts
    subject = subjects.facts[ref]
    accounts = load_accounts(session)
    if accounts.kinds[line.account_id] is not AccountKind.WALLET:
        raise MatchRefusedError("transfers and collections move the wallet, not a bank account")
    taken = []
    for row in subject_line_rows(session, subjects):
        if row[7] == LineState.MATCHED and row[11]:
            taken.append(line_fact(row, accounts, subjects).match.role)  # type: ignore[union-attr]
    fact = line_fact(
        (line.id, line.account_id, line.date, line.amount, line.direction, line.reference,
         line.narration, "unmatched", None, None, None, None, None, line.balance),
        accounts,
        subjects,
    )  # fmt: skip
    if subject.status is SubjectStatus.PENDING and fact.direction == "credit":
        raise MatchRefusedError(
            f"{kind} {subject.reference} is still pending: a credit is matched once its "
            "outcome is known"
        )
    role = hand_role(fact, subject, [r for r in taken if r is not None])
    if role is None or role_direction(role) != fact.direction:
        raise MatchRefusedError(f"a {line.direction} cannot be {kind} {subject.reference}'s money")
    if role in taken:
        raise MatchRefusedError(
            f"{kind} {subject.reference}'s {role} is already on the statement (line matched)"
        )
    figure = ledger_figure(subject, role)
    tolerance = max(subject.fee, MIN_TOLERANCE)
    if abs(line.amount - figure) > tolerance:
        raise MatchRefusedError(
            f"line {line.id} is {line.amount} kobo, {kind} {subject.reference}'s {role} is "
            f"{figure} kobo: further apart than its fee"
        )
    line.state = LineState.MATCHED
    line.transfer_id = subjects.ids[ref] if kind is SubjectKind.TRANSFER else None
    line.collection_id = subjects.ids[ref] if kind is SubjectKind.COLLECTION else None
    line.other_line_id = None
    line.role = str(role)
    line.ignored_as = line.note = None
    line.matched_by, line.matched_at = actor, now
    session.add(line)
    session.flush()
    return LineChange(before, line_record(session, line))


def _match_pair(
    session: Session, line: StatementLine, other_id: int, *, actor: str, now: dt.datetime
) -> None:
    if other_id == line.id:
        raise MatchRefusedError("a line cannot be matched to itself")
    other = _line(session, other_id)
    _open(other)
    if other.account_id == line.account_id:
        raise MatchRefusedError("a pair of lines is one on each of two accounts")
    accounts = load_accounts(session)
    if accounts.kinds[other.account_id] is accounts.kinds[line.account_id]:
        raise MatchRefusedError("a pair is a wallet line and a bank line (a funding or settlement)")
    if other.direction == line.direction or other.amount != line.amount:
        raise MatchRefusedError(
            "a pair moves the same amount in opposite directions "
            f"(line {line.id}: {line.direction} {line.amount}, "
            f"line {other.id}: {other.direction} {other.amount})"
        )
    for one, two in ((line, other), (other, line)):
        one.state = LineState.MATCHED
        one.transfer_id = one.collection_id = None
        one.other_line_id = two.id
        one.role = one.ignored_as = one.note = None
        one.matched_by, one.matched_at = actor, now
        session.add(one)
    session.flush()


def unmatch_line(session: Session, line_id: int, *, actor: str, now: dt.datetime) -> LineChange:
    """Undo a match, a suggestion or an ignore: the line is unmatched, and stays so (the
    matcher leaves a line unmatched by hand alone); the other line of a pair is too."""
    line = _line(session, line_id)
    if line.state == LineState.UNMATCHED:
        raise MatchRefusedError(f"line {line.id} is not matched")
    before = line_record(session, line)
    pair = line.other_line_id if line.state == LineState.MATCHED else None
    lines = [line] + ([_line(session, pair)] if pair is not None else [])
    for one in lines:
        one.state = LineState.UNMATCHED
        one.transfer_id = one.collection_id = one.other_line_id = None
        one.role = one.ignored_as = one.note = None
        one.reversal_pending = False
        one.matched_by, one.matched_at = actor, now
        session.add(one)
    session.flush()
    return LineChange(before, line_record(session, line))


def ignore_line(
    session: Session,
    line_id: int,
    *,
    ignored_as: IgnoreType,
    note: str,
    actor: str,
    now: dt.datetime,
) -> LineChange:
    """Explain a line that belongs to no transfer or collection (a funding, a charge, a
    settlement, other) with a note. Refused for a matched line (unmatch it first) and for a
    note that is empty or too long."""
    try:
        note = check_note(note)
    except NoteError as exc:
        raise MatchRefusedError(f"note: {exc}") from exc
    line = _line(session, line_id)
    _open(line)
    before = line_record(session, line)
    line.state = LineState.IGNORED
    line.transfer_id = line.collection_id = line.other_line_id = None
    line.role = None
    line.ignored_as, line.note = str(ignored_as), note
    line.matched_by, line.matched_at = actor, now
    session.add(line)
    session.flush()
    return LineChange(before, line_record(session, line))
