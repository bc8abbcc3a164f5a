"""Feeding the pure matcher (`statements.matching`) from the ledger and storing what it
decides: the lines to consider, the subjects they name (reference keys), the candidates of
their amounts within the date window, and the lines already matched to those subjects — each
found through an index (docs/rules.md "Matching"; docs/statements.md "How lines are matched")."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import select, update
from sqlmodel import Session, col

from ledger.models import StatementLine
from reconcile.statements.facts import (
    LINE_COLUMNS,
    Accounts,
    Subjects,
    line_fact,
    open_line_rows,
    subject_line_rows,
    subjects_by_amounts,
    subjects_by_ids,
    subjects_by_keys,
)
from statements.facts import AccountKind, LineMatch, LineState, SubjectKind
from statements.facts import StatementLine as LineFact
from statements.matching import Decision, Matching, match_lines
from statements.tokens import reference_key, reference_tokens

# Who the matcher is in `matched_by` (an operator's name never has this form).
MATCHER = "payrecon"


@dataclass
class Considered:
    """The matcher's answer for some lines, with the ledger rows behind its subjects."""

    matching: Matching
    subjects: Subjects
    # The stored lines considered beside the ones given, as they stood, and the decisions
    # about every stored line, by line id.
    context: list[LineFact] = field(default_factory=list)
    stored: dict[int, Decision] = field(default_factory=dict)


def consider(
    session: Session,
    lines: Sequence[LineFact],
    accounts: Accounts,
    *,
    window: dt.timedelta,
    stored: bool = False,
    known: Subjects | None = None,
) -> Considered:
    """Decide `lines` (new ones, not stored yet, unless `stored`) with the subjects they name,
    the candidates of their amounts within `window`, and the stored lines that compete for
    the same subjects or pair with them (`known`: subjects already loaded)."""
    tokens = {
        line.id: reference_tokens(line.reference, line.narration)
        for line in lines
        if line.account_kind is AccountKind.WALLET
    }
    subjects = subjects_by_keys(session, set().union(*tokens.values()))
    if known is not None:
        subjects.merge(known)
    # A line names a subject when one of its tokens is a loaded subject's key (the matcher
    # decides which, `statements.matching.ReferenceIndex`).
    found = {
        reference_key(reference)
        for subject in subjects.facts.values()
        for reference in (subject.reference, subject.provider_reference)
        if reference
    }
    unnamed = [line for line in lines if not tokens.get(line.id, set()) & found]
    context_rows = []
    if unnamed:
        since = min(line.date for line in unnamed) - window
        until = max(line.date for line in unnamed) + window
        amounts = {line.amount for line in unnamed}
        subjects.merge(subjects_by_amounts(session, amounts, since, until))
        context_rows += open_line_rows(session, amounts, since, until)
    context_rows += subject_line_rows(session, subjects)
    given = {line.id for line in lines}
    context_rows = list({row[0]: row for row in context_rows if row[0] not in given}.values())
    missing_transfers = {row[8] for row in context_rows if row[8] is not None}
    missing_collections = {row[9] for row in context_rows if row[9] is not None}
    missing_transfers -= set(subjects.ids_of(SubjectKind.TRANSFER))
    missing_collections -= set(subjects.ids_of(SubjectKind.COLLECTION))
    if missing_transfers or missing_collections:
        subjects.merge(subjects_by_ids(session, missing_transfers, missing_collections))
    context = [line_fact(row, accounts, subjects) for row in context_rows]
    matching = match_lines(
        [*lines, *context], subjects.facts.values(), window=window, tokens=tokens
    )
    considered = Considered(matching, subjects, context)
    context_ids = {line.id for line in context} | (given if stored else set())
    considered.stored = {d.line: d for d in matching.decisions if d.line in context_ids}
    return considered


def match_columns(decision: Decision, subjects: Subjects, *, now: dt.datetime) -> dict[str, object]:
    """The line's columns for a decision of the matcher (matched and suggested lines carry
    their match; only a match is signed by the matcher)."""
    match = decision.match if decision.state is not LineState.UNMATCHED else None
    return {
        "state": str(decision.state),
        **match_targets(match, subjects),
        "role": None if match is None or match.role is None else str(match.role),
        "matched_by": MATCHER if decision.state is LineState.MATCHED else None,
        "matched_at": now if decision.state is LineState.MATCHED else None,
    }


def match_targets(match: LineMatch | None, subjects: Subjects) -> dict[str, int | None]:
    """The transfer, collection or other line a match points at, as row ids."""
    targets: dict[str, int | None] = {
        "transfer_id": None,
        "collection_id": None,
        "other_line_id": None,
    }
    if match is None:
        return targets
    if match.subject is not None:
        column = "transfer_id" if match.subject.kind is SubjectKind.TRANSFER else "collection_id"
        targets[column] = subjects.ids[match.subject]
    targets["other_line_id"] = match.line
    return targets


def store_decisions(
    session: Session,
    considered: Considered,
    *,
    now: dt.datetime,
) -> int:
    """Write the changed decisions about stored lines, and mark the reversals the matcher
    saw; the number of lines changed."""
    changed = 0
    for decision in considered.stored.values():
        if not decision.changed:
            continue
        values = match_columns(decision, considered.subjects, now=now)
        session.execute(
            update(StatementLine).where(col(StatementLine.id) == decision.line).values(**values)
        )
        changed += 1
    mark_reversals(session, (r.line for r in considered.matching.reversals if r.line))
    return changed


def mark_reversals(session: Session, line_ids: Iterable[int]) -> None:
    """Record on each line that it is a reversal the ledger does not know yet (docs/rules.md
    "Reversals", source `statement`; applying it to the transfer comes with the reversals
    work)."""
    ids = sorted(set(line_ids))
    if ids:
        session.execute(
            update(StatementLine)
            .where(col(StatementLine.id).in_(ids))
            .values(reversal_pending=True)
        )


def reconsider_open(
    session: Session,
    accounts: Accounts,
    *,
    window: dt.timedelta,
    limit: int,
    now: dt.datetime,
) -> Considered | None:
    """Decide again up to `limit` unmatched and suggested lines, newest first (the state
    index): a line can arrive before its transfer is final, and a suggestion can stop being
    the only one. None when no line is open."""
    statement = (
        select(*LINE_COLUMNS)
        .where(
            col(StatementLine.state).in_(("unmatched", "suggested")),
            col(StatementLine.matched_by).is_(None),  # a line unmatched by hand stays so
        )
        .order_by(col(StatementLine.id).desc())
        .limit(limit)
    )
    found = [tuple(row) for row in session.execute(statement)]
    if not found:
        return None
    subjects = subjects_by_ids(
        session,
        (row[8] for row in found if row[8] is not None),
        (row[9] for row in found if row[9] is not None),
    )
    lines = [line_fact(row, accounts, subjects) for row in found]
    considered = consider(session, lines, accounts, window=window, stored=True, known=subjects)
    store_decisions(session, considered, now=now)
    return considered
