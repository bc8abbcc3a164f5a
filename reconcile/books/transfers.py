"""The transfers' book: payouts looked up at `GET /v1/transaction/{reference}` and judged by
`reconcile.checks.evaluate` (docs/provider-interface.md)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from ledger.events import transfers as relay_transfers
from ledger.events.outbox import Subscriber
from ledger.events.types import Subject
from ledger.models import Transfer
from ledger.reversals import reverse_transfer
from ledger.types import FindingKind, Initiation, TransferStatus, status_or_none
from reconcile.alert_plan import rules_of
from reconcile.answers import LookupAnswer
from reconcile.checks import LedgerView, Policy, Verdict, evaluate
from reconcile.lookup import TRANSACTION
from reconcile.pass_summary import LookupCounts, PassSummary

# Findings the reconciler owns on a transfer; the receiver's kinds are never touched here.
RECONCILER_KINDS = frozenset(
    {
        FindingKind.AMOUNT_MISMATCH,
        FindingKind.FEE_MISMATCH,
        FindingKind.STATUS_CONFLICT,
        FindingKind.STALE_PENDING,
        FindingKind.UNKNOWN_TO_PROVIDER,
        FindingKind.UNVERIFIABLE,
    }
)


def policy_of(settings: Any) -> Policy:
    """The transfer core's policy from settings (`reconcile.poller.ReconcileSettings`)."""
    return Policy(
        check_backoff=settings.check_backoff,
        check_backoff_max=settings.check_backoff_max,
        not_found_limit=settings.not_found_limit,
        stale_after=settings.stale_after,
        fee_schedule=settings.fee_schedule,
        alerting=rules_of(settings),
        reverify_after=tuple(settings.reverify_after),
    )


def view_of(transfer: Transfer) -> LedgerView:
    """The pure core's view of a transfer row."""
    return LedgerView(
        reference=transfer.reference,
        amount=transfer.amount,
        fee=transfer.fee,
        status=status_or_none(transfer.status) or TransferStatus.PENDING,
        confirmed=transfer.confirmed,
        created_at=transfer.created_at,
        provider_reference=transfer.provider_reference,
        initiation=Initiation(transfer.initiation) if transfer.initiation else None,
        webhook_status=status_or_none(transfer.webhook_status),
        webhook_amount=transfer.webhook_amount,
        webhook_fee=transfer.webhook_fee,
        provider_status=status_or_none(transfer.provider_status),
        provider_amount=transfer.provider_amount,
        provider_fee=transfer.provider_fee,
        failure_reason=transfer.failure_reason,
        check_attempts=transfer.check_attempts,
        not_found_count=transfer.not_found_count,
        confirmed_at=transfer.confirmed_at,
        reverify_done=transfer.reverify_done,
    )


@dataclass(frozen=True)
class TransferBook:
    """Payouts (`reconcile.books.book.Book`)."""

    policy: Policy
    subject: Subject = Subject.TRANSFER
    model: type[Transfer] = Transfer
    lookup: str | None = TRANSACTION
    # A status conflict stays on the record once raised (docs/architecture.md: "Why a
    # webhook is only evidence"): no later answer resolves it.
    resolvable: frozenset[FindingKind] = RECONCILER_KINDS - {FindingKind.STATUS_CONFLICT}

    def evaluate(self, row: Transfer, answer: LookupAnswer, now: dt.datetime) -> Verdict:
        """`reconcile.checks.evaluate` on the row's view."""
        return evaluate(view_of(row), answer, self.policy, now)

    def write(self, row: Transfer, verdict: Verdict) -> None:
        """The provider's figures."""
        row.provider_amount = verdict.provider_amount
        row.provider_fee = verdict.provider_fee
        row.reverify_done = verdict.reverify_done

    def settle(
        self,
        session: Session,
        row: Transfer,
        verdict: Verdict,
        *,
        now: dt.datetime,
        endpoints: list[Subscriber],
        summary: PassSummary,
    ) -> None:
        """Re-verification counts, and the reversal the verdict found (docs/rules.md:
        Reversals), after `transfer.confirmed` so `transfer.reversed` comes next in order."""
        summary.reverified += verdict.reverified
        if verdict.reversal is not None and reverse_transfer(
            session,
            row,
            reason=verdict.reversal.reason,
            source=verdict.reversal.source,
            now=now,
            endpoints=endpoints,
        ):
            summary.reversed += 1
            summary.count_raised(FindingKind.REVERSED_AFTER_SUCCESS.value)

    def confirmed(
        self, session: Session, row: Transfer, *, now: dt.datetime, endpoints: list[Subscriber]
    ) -> str:
        """`transfer.confirmed`."""
        return relay_transfers.confirmed(session, row, now=now, endpoints=endpoints)

    def counts(self, summary: PassSummary) -> LookupCounts:
        """The summary's top-level counters are the transfers'."""
        return summary
