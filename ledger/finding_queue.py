"""The findings queue: findings filtered by state, kind and assignee, with their notes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.finding_record import Owner, finding_record, notes_of
from ledger.models import Finding
from ledger.queries import MAX_PAGE, decode_cursor, encode_cursor
from ledger.subjects import SUBJECT_MODELS, SubjectRef, about
from ledger.types import FindingState

CURSOR_KIND = "f"
_FINDINGS = Finding.__table__.c  # type: ignore[attr-defined]
# `assignee=` this value keeps the findings nobody has taken.
UNASSIGNED = "-"


@dataclass(frozen=True)
class FindingFilter:
    """The queue's filters; None means any."""

    state: FindingState | None = None
    kind: str | None = None
    assignee: str | None = None  # UNASSIGNED for none
    subject: SubjectRef | None = None  # one transfer's or collection's findings


def _where(statement: Any, where: FindingFilter) -> Any:
    if where.state is FindingState.RESOLVED:
        statement = statement.where(col(Finding.resolved_at).is_not(None))
    elif where.state is FindingState.ACKNOWLEDGED:
        statement = statement.where(
            col(Finding.resolved_at).is_(None), col(Finding.acknowledged_at).is_not(None)
        )
    elif where.state is FindingState.OPEN:
        statement = statement.where(
            col(Finding.resolved_at).is_(None), col(Finding.acknowledged_at).is_(None)
        )
    if where.kind is not None:
        statement = statement.where(col(Finding.kind) == where.kind)
    if where.assignee == UNASSIGNED:
        statement = statement.where(col(Finding.assignee).is_(None))
    elif where.assignee is not None:
        statement = statement.where(col(Finding.assignee) == where.assignee)
    if where.subject is not None:
        subject = where.subject
        statement = statement.where(about(_FINDINGS, subject.subject, subject.id))
    return statement


@dataclass(frozen=True)
class QueuePage:
    """One page of the queue (newest first) and the next page's cursor."""

    items: list[dict[str, Any]]
    next_cursor: str | None


def list_queue(
    session: Session, where: FindingFilter, *, limit: int = 50, cursor: str | None = None
) -> QueuePage:
    """Findings newest first, filtered, keyset-paginated by id, each with its notes."""
    limit = max(1, min(limit, MAX_PAGE))
    # Findings first, their transfers after by primary key: a join would let the planner
    # hash the whole transfer table to find one page (PostgreSQL did, at a million rows).
    statement = _where(select(Finding).order_by(col(Finding.id).desc()), where)
    if cursor is not None:
        statement = statement.where(col(Finding.id) < decode_cursor(cursor, kind=CURSOR_KIND))
    findings = list(session.execute(statement.limit(limit + 1)).scalars())
    more = len(findings) > limit
    findings = findings[:limit]
    owners = _owners(session, findings)
    notes = notes_of(session, [int(f.id) for f in findings if f.id is not None])
    items = [finding_record(f, owners[_owner_key(f)], notes[int(f.id or 0)]) for f in findings]
    last = findings[-1].id if findings and more else None
    return QueuePage(items, None if last is None else encode_cursor(last, kind=CURSOR_KIND))


def _owner_key(finding: Finding) -> tuple[str, int]:
    return (finding.subject, finding.subject_id)


def _owners(session: Session, findings: Sequence[Finding]) -> dict[tuple[str, int], Owner]:
    """The transfers, collections and statement lines the findings are about, by primary
    key (a query a kind of subject)."""
    owners: dict[tuple[str, int], Owner] = {}
    for name, model in SUBJECT_MODELS.items():
        ids = sorted({key[1] for f in findings if (key := _owner_key(f))[0] == name})
        if ids:
            for row in session.execute(select(model).where(col(model.id).in_(ids))).scalars():
                owners[(name, int(row.id or 0))] = row
    return owners


def finding_item(session: Session, finding_id: int) -> dict[str, Any] | None:
    """One finding as the queue shows it; None when there is none."""
    finding = session.get(Finding, finding_id)
    if finding is None:
        return None
    owner = _owners(session, [finding])[_owner_key(finding)]
    return finding_record(finding, owner, notes_of(session, [finding_id])[finding_id])
