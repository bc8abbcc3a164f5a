"""Working findings by filter: acknowledge or assign everything a queue filter keeps, after the
operator has seen (and confirmed) how many that is (docs/console.md "Bulk actions by filter").

* **The count is the confirmation.** The caller sends the count it showed the operator
  (`expected_count`); when the findings the action would change are now a different number,
  nothing is changed and `CountChangedError` (409) carries the current count.
* **Batches, each its own transaction.** The ids are read with the count (one snapshot), then
  changed `BATCH` at a time, each batch one short write transaction (SQLite's writer lock and
  PostgreSQL's row locks are held for one batch, never for the whole action). A finding that
  changed between the count and its batch (resolved by the reconciler, acknowledged by a
  colleague) is skipped, not changed twice: `BulkResult.skipped`.
* **What is in scope.** Acknowledging acts on the matching *open* findings (not yet
  acknowledged, not resolved); assigning on the matching unresolved ones. Running the same
  action again finds none left (acknowledge) or changes nothing new (assign), so a retry after a
  lost answer is harmless.
* **Audit: one row per finding**, the same row a single acknowledgement or assignment writes
  (`finding.ack` with the note, `finding.assign` with the assignee, subject `finding:ID`), so a
  finding's history reads the same however it was worked.
* Relay events, notes and resolution behave per finding exactly as for one: each acknowledged
  finding gets its `finding.acknowledged` event and its note.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session, col

from admin.actions.actor import Actor, audit_many
from admin.actions.findings import checked_note
from admin.errors import ConflictError, InvalidError, UnknownOperatorError
from admin.operator_names import is_operator
from ledger.audit import AuditAction
from ledger.db import read_session, write_session
from ledger.events.findings import acknowledge_findings
from ledger.finding_queue import FindingFilter, matching
from ledger.findings import assign_rows
from ledger.models import Finding
from ledger.subjects import BOOK_MODELS

# Findings changed per transaction: a batch holds the writer lock for a fraction of a second.
BATCH = 500
# The most findings one action changes: past it the filter is too wide (narrow it, or run it
# again once the first part is done).
MAX_BULK = 50_000


_FINDINGS = Finding.__table__  # type: ignore[attr-defined]


class CountChangedError(ConflictError):
    """409: the findings the action would change are no longer the number confirmed."""

    def __init__(self, count: int, expected: int) -> None:
        super().__init__(
            f"{count} findings match now, not {expected}; nothing changed, confirm again",
            code="count_changed",
            count=count,
            expected_count=expected,
        )


@dataclass(frozen=True)
class BulkResult:
    """What one bulk action did: `matched` (the confirmed count), `changed`, `skipped`
    (changed by someone else between the count and their batch) and `batches` committed."""

    matched: int
    changed: int
    skipped: int
    batches: int

    def as_dict(self) -> dict[str, int]:
        """The API's answer."""
        return {
            "matched": self.matched,
            "changed": self.changed,
            "skipped": self.skipped,
            "batches": self.batches,
        }


def _in_scope(statement: Any, where: FindingFilter, *, acknowledging: bool) -> Any:
    statement = matching(statement, where).where(col(Finding.resolved_at).is_(None))
    if acknowledging:
        statement = statement.where(col(Finding.acknowledged_at).is_(None))
    return statement


def _ids(session: Session, where: FindingFilter, *, acknowledging: bool) -> list[int]:
    statement = _in_scope(select(col(Finding.id)), where, acknowledging=acknowledging)
    return [
        int(i)
        for i in session.execute(statement.order_by(col(Finding.id)).limit(MAX_BULK + 1)).scalars()
    ]


def _snapshot(
    engine: Engine, where: FindingFilter, expected_count: int, *, acknowledging: bool
) -> list[int]:
    with read_session(engine) as session:
        ids = _ids(session, where, acknowledging=acknowledging)
    if len(ids) > MAX_BULK:
        raise InvalidError(
            "filter", f"more than {MAX_BULK} findings match; narrow the filter", count=len(ids)
        )
    if len(ids) != expected_count:
        raise CountChangedError(len(ids), expected_count)
    return ids


def _references(session: Session, findings: list[Any]) -> dict[tuple[str, int], str]:
    found: dict[tuple[str, int], str] = {}
    for subject, model in BOOK_MODELS.items():
        ids = sorted({f.subject_id for f in findings if f.subject == subject.value})
        if ids:
            table = model.__table__  # type: ignore[union-attr]
            rows = session.execute(select(table.c.id, table.c.reference).where(table.c.id.in_(ids)))
            found.update({(subject.value, int(i)): str(ref) for i, ref in rows})
    return found


def _in_batches(
    engine: Engine,
    ids: list[int],
    where: FindingFilter,
    *,
    acknowledging: bool,
    change: Callable[[Session, list[Any]], None],
) -> BulkResult:
    changed = batches = 0
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        with write_session(engine) as session:
            # Still in scope (and still matching the filter) now, locked until the batch commits.
            statement = _in_scope(
                select(_FINDINGS).where(_FINDINGS.c.id.in_(batch)),
                where,
                acknowledging=acknowledging,
            )
            findings = list(session.execute(statement.order_by(_FINDINGS.c.id).with_for_update()))
            if findings:
                change(session, findings)
        changed += len(findings)
        batches += 1
    return BulkResult(len(ids), changed, len(ids) - changed, batches)


def acknowledge_matching(
    engine: Engine,
    actor: Actor,
    where: FindingFilter,
    *,
    expected_count: int,
    note: str,
    now: dt.datetime,
) -> BulkResult:
    """Acknowledge every open finding `where` keeps with one note by `actor`, each audited
    and each with its `finding.acknowledged` event, when they are `expected_count` findings
    (CountChangedError otherwise, nothing changed)."""
    text = checked_note(note)
    ids = _snapshot(engine, where, expected_count, acknowledging=True)

    def change(session: Session, findings: list[Any]) -> None:
        acknowledge_findings(
            session,
            findings,
            note=text,
            now=now,
            author=actor.name,
            references=_references(session, findings),
        )
        subjects = [(f"finding:{f.id}", text) for f in findings]
        audit_many(session, actor, AuditAction.FINDING_ACK, subjects, now=now)

    return _in_batches(engine, ids, where, acknowledging=True, change=change)


def assign_matching(
    engine: Engine,
    actor: Actor,
    where: FindingFilter,
    *,
    expected_count: int,
    assignee: str | None,
    now: dt.datetime,
) -> BulkResult:
    """Give every unresolved finding `where` keeps to `assignee` (None: nobody), each audited,
    when they are `expected_count` findings (CountChangedError otherwise, nothing changed);
    UnknownOperatorError for a name no operator has."""
    if assignee is not None:
        with read_session(engine) as session:
            if not is_operator(session, assignee):
                raise UnknownOperatorError(f"no operator is named {assignee!r}")
    ids = _snapshot(engine, where, expected_count, acknowledging=False)
    detail = assignee or "nobody"

    def change(session: Session, findings: list[Any]) -> None:
        assign_rows(session, [int(f.id) for f in findings], assignee=assignee, now=now)
        subjects = [(f"finding:{f.id}", detail) for f in findings]
        audit_many(session, actor, AuditAction.FINDING_ASSIGN, subjects, now=now)

    return _in_batches(engine, ids, where, acknowledging=False, change=change)
