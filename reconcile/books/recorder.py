"""Recording a chunk of lookups on any book: the one place a verdict reaches the ledger.

For each claimed row still ours, in one transaction for the chunk: the book's evaluator gives
a verdict; the row takes its status, confirmation, provider reference, check schedule and
the book's own fields; the confirmed event is written the first time the provider confirms;
findings are raised and resolved with their events (`ledger.events.findings`); the pass's
counters move; and every lookup is kept as a provider check. Alerts are queued by the pass
afterwards from the open findings (`reconcile.alerts`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import structlog
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from ledger.checks import record_checks
from ledger.db import write_session
from ledger.events.findings import raise_finding, resolve_finding
from ledger.events.outbox import Subscriber, subscribers
from ledger.findings import open_kinds_by_subject
from ledger.types import TransferStatus
from reconcile.answers import NotFound, Transient
from reconcile.books.book import Book, Verdict
from reconcile.lookup import ForeignAnswer, Looked, check_row
from reconcile.pass_summary import PassSummary

logger = structlog.get_logger(__name__)


def record_chunk(
    engine: Engine,
    book: Book[Any, Any],
    results: Sequence[Looked],
    *,
    owner: str,
    now: dt.datetime,
    summary: PassSummary,
) -> None:
    """Record one chunk of answers in one transaction (rows a peer took over are skipped)."""
    model = book.model
    with write_session(engine) as session:
        by_id = {looked.target.id: looked.answer for looked in results}
        open_kinds = open_kinds_by_subject(session, subject=book.subject, ids=by_id)
        endpoints = subscribers(session)  # read once for the chunk's relay events
        rows = session.execute(
            select(model)
            .where(col(model.id).in_(list(by_id)))
            .order_by(col(model.id))
            .with_for_update()
        ).scalars()
        for row in rows:
            if row.lease_owner != owner:
                continue  # our claim expired and a peer took it: its answer wins
            answer = by_id[row.id]
            verdict = book.evaluate(row, answer, now)
            _write(session, book, row, verdict, now, endpoints)
            book.settle(session, row, verdict, now=now, endpoints=endpoints, summary=summary)
            _findings(
                session, book, row, verdict, now, summary, open_kinds.get(row.id, set()), endpoints
            )
            _count(book, summary, verdict, answer)
        # Every lookup is kept, in the decision's transaction: one executemany for the chunk.
        record_checks(session, [check_row(looked, now, subject=book.subject) for looked in results])


def _write(
    session: Session,
    book: Book[Any, Any],
    row: Any,
    verdict: Verdict,
    now: dt.datetime,
    endpoints: list[Subscriber],
) -> None:
    """The row as the verdict leaves it, then the confirmed event when it is news."""
    row.status = verdict.status.value
    if verdict.newly_confirmed:
        row.confirmed_at = now
    row.confirmed = verdict.confirmed
    row.provider_status = verdict.provider_status.value if verdict.provider_status else None
    row.failure_reason = verdict.failure_reason
    row.initiation = verdict.initiation.value if verdict.initiation else None
    if verdict.provider_reference and row.provider_reference is None:
        model = book.model
        taken = session.execute(
            select(col(model.id)).where(col(model.provider_reference) == verdict.provider_reference)
        ).first()
        if taken is None:
            row.provider_reference = verdict.provider_reference
        else:  # an orphan row already holds it; the lead's registration merges them
            logger.warning("provider_reference_taken", reference=row.reference)
    book.write(row, verdict)
    row.check_attempts = verdict.check_attempts
    row.not_found_count = verdict.not_found_count
    row.last_checked_at = now
    row.next_check_at = (
        None if verdict.next_check_in is None else now + dt.timedelta(seconds=verdict.next_check_in)
    )
    row.lease_owner = None
    row.lease_until = None
    row.updated_at = now
    session.flush()
    if verdict.newly_confirmed:
        book.confirmed(session, row, now=now, endpoints=endpoints)


def _findings(
    session: Session,
    book: Book[Any, Any],
    row: Any,
    verdict: Verdict,
    now: dt.datetime,
    summary: PassSummary,
    open_kinds: set[str],
    endpoints: list[Subscriber],
) -> None:
    """Raise what the verdict says must be open; resolve what it says is gone (only kinds
    this book may resolve, and only those open: resolving costs nothing otherwise)."""
    subject = {"subject": book.subject, "subject_id": row.id, "reference": row.reference}
    for kind, detail in verdict.open.items():
        if raise_finding(
            session, kind=kind, detail=detail, now=now, endpoints=endpoints, **subject
        ):
            summary.count_raised(kind.value)
    for kind in verdict.resolved & book.resolvable:
        if kind.value in open_kinds and resolve_finding(
            session, kind=kind, now=now, endpoints=endpoints, **subject
        ):
            summary.findings_resolved += 1


def _count(book: Book[Any, Any], summary: PassSummary, verdict: Verdict, answer: Any) -> None:
    counts = book.counts(summary)
    counts.checked += 1
    counts.confirmed += verdict.newly_confirmed
    counts.pending += verdict.status is TransferStatus.PENDING
    counts.not_found += isinstance(answer, NotFound)
    foreign = isinstance(answer, ForeignAnswer)
    counts.transient_errors += isinstance(answer, Transient) and not foreign
    counts.foreign_answers += foreign
    summary.provider_errors += verdict.provider_error
