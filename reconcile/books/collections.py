"""The collections' book: accounts customers pay into, looked up at
`GET /v1/collection/{reference}` and judged by `reconcile.collection_checks`
(docs/rules.md: Collections)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from ledger.events import collections as relay_collections
from ledger.events.outbox import Subscriber
from ledger.events.types import Subject
from ledger.models import Collection
from ledger.types import FindingKind, Initiation, TransferStatus, status_or_none
from reconcile.answers import LookupAnswer
from reconcile.collection_checks import (
    COLLECTION_KINDS,
    CollectionPolicy,
    CollectionVerdict,
    CollectionView,
    evaluate_collection,
)
from reconcile.lookup import COLLECTION
from reconcile.pass_summary import LookupCounts, PassSummary


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


@dataclass(frozen=True)
class CollectionBook:
    """Collections (`reconcile.books.book.Book`)."""

    policy: CollectionPolicy
    subject: Subject = Subject.COLLECTION
    model: type[Collection] = Collection
    lookup: str | None = COLLECTION
    resolvable: frozenset[FindingKind] = COLLECTION_KINDS

    def evaluate(
        self, row: Collection, answer: LookupAnswer, now: dt.datetime
    ) -> CollectionVerdict:
        """`reconcile.collection_checks.evaluate_collection` on the row's view."""
        return evaluate_collection(collection_view(row), answer, self.policy, now)

    def write(self, row: Collection, verdict: CollectionVerdict) -> None:
        """What the customer paid, when, the fee charged, and the last look's mark."""
        row.amount_paid = verdict.amount_paid
        row.provider_fee = verdict.provider_fee
        row.paid_at = verdict.paid_at
        row.final_check_done = verdict.final_check_done

    def confirmed(
        self, session: Session, row: Collection, *, now: dt.datetime, endpoints: list[Subscriber]
    ) -> str:
        """`collection.confirmed`."""
        return relay_collections.confirmed(session, row, now=now, endpoints=endpoints)

    def settle(
        self,
        session: Session,
        row: Collection,
        verdict: CollectionVerdict,
        *,
        now: dt.datetime,
        endpoints: list[Subscriber],
        summary: PassSummary,
    ) -> None:
        """Nothing beyond the common fields: a collection is never reversed."""

    def counts(self, summary: PassSummary) -> LookupCounts:
        """The summary's `collections` counters."""
        return summary.collections
