"""Recording a chunk of collection lookups: the thin shell around
`reconcile.collection_checks.evaluate_collection` (the poller claims and looks them up)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session, col

from ledger.checks import record_checks
from ledger.db import write_session
from ledger.events import collections as relay_collections
from ledger.events.findings import raise_finding, resolve_finding
from ledger.events.outbox import Subscriber, subscribers
from ledger.findings import open_kinds_by_subject
from ledger.models import Collection
from ledger.types import Initiation, TransferStatus, status_or_none
from reconcile.checks import Answer, NotFound, Transient
from reconcile.collection_checks import (
    COLLECTION_KINDS,
    CollectionPolicy,
    CollectionView,
    evaluate_collection,
)
from reconcile.lookup import ForeignAnswer, Looked, check_row
from reconcile.pass_summary import PassSummary


def collection_policy_of(settings: Any) -> CollectionPolicy:
    """The collection core's policy from settings (the transfers' backoff and limits, and
    PAYRECON_COLLECTION_GRACE)."""
    return CollectionPolicy(
        check_backoff=settings.check_backoff,
        check_backoff_max=settings.check_backoff_max,
        not_found_limit=settings.not_found_limit,
        stale_after=settings.stale_after,
        grace=settings.collection_grace,
    )


def collection_view(row: Collection) -> CollectionView:
    """The pure core's view of a collection row."""
    return CollectionView(
        reference=row.reference,
        amount=row.amount,
        fee=row.fee,
        status=status_or_none(row.status) or TransferStatus.PENDING,
        confirmed=row.confirmed,
        created_at=row.created_at,
        expires_at=row.expires_at,
        provider_reference=row.provider_reference,
        initiation=Initiation(row.initiation) if row.initiation else None,
        provider_status=status_or_none(row.provider_status),
        amount_paid=row.amount_paid,
        provider_fee=row.provider_fee,
        paid_at=row.paid_at,
        failure_reason=row.failure_reason,
        check_attempts=row.check_attempts,
        not_found_count=row.not_found_count,
        final_check_done=row.final_check_done,
    )


def _apply_one(
    session: Session,
    row: Collection,
    answer: Answer,
    policy: CollectionPolicy,
    now: dt.datetime,
    summary: PassSummary,
    open_kinds: frozenset[str],
    endpoints: list[Subscriber],
) -> None:
    """Record one answer on its collection, with the relay events of what changed."""
    verdict = evaluate_collection(collection_view(row), answer, policy, now)
    row.status = verdict.status.value
    if verdict.newly_confirmed:
        row.confirmed_at = now
    row.confirmed = verdict.confirmed
    row.provider_status = verdict.provider_status.value if verdict.provider_status else None
    row.amount_paid = verdict.amount_paid
    row.provider_fee = verdict.provider_fee
    row.paid_at = verdict.paid_at
    row.failure_reason = verdict.failure_reason
    row.initiation = verdict.initiation.value if verdict.initiation else None
    if verdict.provider_reference and row.provider_reference is None:
        taken = session.execute(
            select(col(Collection.id)).where(
                col(Collection.provider_reference) == verdict.provider_reference
            )
        ).first()
        if taken is None:
            row.provider_reference = verdict.provider_reference
    row.final_check_done = verdict.final_check_done
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
    assert row.id is not None
    if verdict.newly_confirmed:
        relay_collections.confirmed(session, row, now=now, endpoints=endpoints)
    for kind, detail in verdict.open.items():
        if raise_finding(
            session,
            collection_id=row.id,
            kind=kind,
            detail=detail,
            now=now,
            reference=row.reference,
            endpoints=endpoints,
        ):
            summary.count_raised(kind.value)
    for kind in verdict.resolved & COLLECTION_KINDS:
        if kind.value in open_kinds and resolve_finding(
            session,
            collection_id=row.id,
            kind=kind,
            now=now,
            reference=row.reference,
            endpoints=endpoints,
        ):
            summary.findings_resolved += 1
    counts = summary.collections
    counts.checked += 1
    counts.confirmed += verdict.newly_confirmed
    counts.pending += verdict.status is TransferStatus.PENDING
    counts.not_found += isinstance(answer, NotFound)
    foreign = isinstance(answer, ForeignAnswer)
    counts.transient_errors += isinstance(answer, Transient) and not foreign
    counts.foreign_answers += foreign
    summary.provider_errors += verdict.provider_error


def apply_collections(
    engine: Engine,
    results: Sequence[Looked],
    *,
    owner: str,
    policy: CollectionPolicy,
    now: dt.datetime,
    summary: PassSummary,
) -> None:
    """Record one chunk of answers in one transaction (rows a peer took over are skipped)."""
    with write_session(engine) as session:
        by_id = {looked.target.id: looked.answer for looked in results}
        open_kinds = open_kinds_by_subject(session, column="collection_id", ids=by_id)
        endpoints = subscribers(session)
        rows = session.execute(
            select(Collection)
            .where(col(Collection.id).in_(list(by_id)))
            .order_by(col(Collection.id))
            .with_for_update()
        ).scalars()
        for row in rows:
            if row.lease_owner != owner:
                continue  # our claim expired and a peer took it: its answer wins
            assert row.id is not None
            _apply_one(
                session,
                row,
                by_id[row.id],
                policy,
                now,
                summary,
                frozenset(open_kinds.get(row.id, ())),
                endpoints,
            )
        # Every lookup is kept, in the decision's transaction: one executemany for the chunk.
        record_checks(session, [check_row(looked, now, subject="collection") for looked in results])
