"""The reconciler's pure core for collections: ledger view + provider answer → new state and
findings (docs/rules.md: Collections). No I/O, like `reconcile.checks`, whose answers
(`reconcile.answers`), backoff and finding vocabulary it shares.

When a finding holds (each is opened when its condition holds and resolved when it stops):

* `underpaid` — the provider reports a payment of more than 0 and less than expected;
* `overpaid` — the provider reports a successful payment of more than expected;
* `paid_after_expiry` — a successful payment whose completion is after `expires_at`;
* `fee_mismatch` — the amount paid is the amount expected and the fee charged differs from
  the quote;
* `unknown_to_provider` — `not_found_limit` consecutive "not found" answers;
* `unverifiable` — the answer could not be interpreted (or names another collection);
* `stale_pending` — still pending after `expires_at` + the grace (no expiry known: after
  `created_at` + `stale_after`), unless `unknown_to_provider` holds. An answer that says
  nothing of this collection (an error, garbage, an answer about another merchant reference)
  leaves the ledger's pending status standing, so it is stale too: the money is unaccounted
  for past its deadline whatever the reason, and finance must see it beside `unverifiable`
  (transfers behave the same way, `reconcile.checks`).

A collection is looked up with backoff until the provider gives a final status, and once
more at `expires_at` + the grace, so a payment the provider records late is still seen.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from ledger.types import FindingKind, Initiation, TransferStatus
from reconcile.answers import (
    Found,
    LookupAnswer,
    Uninterpretable,
    answered_for_another,
    backoff_delay,
    read_without_figures,
)
from reconcile.checks import FINAL

# The kinds this core decides; every other kind on a collection is left alone.
COLLECTION_KINDS = frozenset(
    {
        FindingKind.UNDERPAID,
        FindingKind.OVERPAID,
        FindingKind.PAID_AFTER_EXPIRY,
        FindingKind.FEE_MISMATCH,
        FindingKind.UNKNOWN_TO_PROVIDER,
        FindingKind.UNVERIFIABLE,
        FindingKind.STALE_PENDING,
    }
)
# PAYRECON_COLLECTION_GRACE's default.
DEFAULT_COLLECTION_GRACE = 600
_PAYMENT_KINDS = (
    FindingKind.UNDERPAID,
    FindingKind.OVERPAID,
    FindingKind.PAID_AFTER_EXPIRY,
    FindingKind.FEE_MISMATCH,
)


@dataclass(frozen=True)
class CollectionPolicy:
    """The settings this core needs (PAYRECON_CHECK_BACKOFF…, _NOT_FOUND_LIMIT, _STALE_AFTER,
    _COLLECTION_GRACE)."""

    check_backoff: int
    check_backoff_max: int
    not_found_limit: int
    stale_after: int
    grace: int


@dataclass(frozen=True)
class CollectionView:
    """What the ledger knows of one collection before this check."""

    reference: str
    amount: int  # expected
    fee: int | None  # quoted at creation
    status: TransferStatus
    confirmed: bool
    created_at: dt.datetime
    expires_at: dt.datetime | None = None
    provider_reference: str | None = None
    initiation: Initiation | None = None
    provider_status: TransferStatus | None = None
    amount_paid: int | None = None
    provider_fee: int | None = None
    paid_at: dt.datetime | None = None
    failure_reason: str | None = None
    check_attempts: int = 0
    not_found_count: int = 0
    final_check_done: bool = False


@dataclass(frozen=True)
class CollectionVerdict:
    """The new state of the collection and what must happen to its findings."""

    status: TransferStatus
    confirmed: bool
    next_check_in: float | None  # seconds from now; None = nothing more to check
    final_check_done: bool
    check_attempts: int
    not_found_count: int
    provider_status: TransferStatus | None
    amount_paid: int | None
    provider_fee: int | None
    paid_at: dt.datetime | None
    provider_reference: str | None
    failure_reason: str | None
    initiation: Initiation | None
    open: dict[FindingKind, str] = field(default_factory=dict)
    resolved: frozenset[FindingKind] = frozenset()
    # The provider confirmed a final status not confirmed before (collection.confirmed).
    newly_confirmed: bool = False
    provider_error: bool = False


def deadline(view: CollectionView, policy: CollectionPolicy) -> dt.datetime:
    """When a still-pending collection becomes stale, and its last check is due."""
    if view.expires_at is not None:
        return view.expires_at + dt.timedelta(seconds=policy.grace)
    return view.created_at + dt.timedelta(seconds=policy.stale_after)


def evaluate_collection(
    view: CollectionView, answer: LookupAnswer, policy: CollectionPolicy, now: dt.datetime
) -> CollectionVerdict:
    """Apply one provider answer to one collection; the verdict the ledger must reflect."""
    if isinstance(answer, Found) and answered_for_another(
        view.reference, view.provider_reference, answer
    ):
        answer = Uninterpretable(
            f"lookup of collection {view.reference} answered for merchant reference "
            f"{answer.merchant_reference!r}"
        )
    attempts = view.check_attempts + 1
    last_check = deadline(view, policy)
    past_deadline = now >= last_check
    if isinstance(answer, Found):
        return _found(view, answer, policy, now, attempts, last_check, past_deadline)
    said = read_without_figures(
        answer,
        not_found_count=view.not_found_count,
        not_found_limit=policy.not_found_limit,
        delay=backoff_delay(attempts, policy.check_backoff, policy.check_backoff_max),
    )
    not_found = said.not_found
    open_ = dict(said.open)
    resolved = set(said.resolved)
    unknown = not_found >= policy.not_found_limit
    stale = _stale(view.status, view, now, last_check, unknown)
    if stale is not None:
        open_[FindingKind.STALE_PENDING] = stale
    elif view.status is not TransferStatus.PENDING or unknown:
        resolved.add(FindingKind.STALE_PENDING)
    return CollectionVerdict(
        status=view.status,
        confirmed=view.confirmed,
        next_check_in=said.next_check_in,
        final_check_done=view.final_check_done,
        check_attempts=attempts,
        not_found_count=not_found,
        provider_status=view.provider_status,
        amount_paid=view.amount_paid,
        provider_fee=view.provider_fee,
        paid_at=view.paid_at,
        provider_reference=view.provider_reference,
        failure_reason=view.failure_reason,
        initiation=view.initiation,
        open=open_,
        resolved=frozenset(resolved - set(open_)),
        provider_error=said.provider_error,
    )


def _found(
    view: CollectionView,
    answer: Found,
    policy: CollectionPolicy,
    now: dt.datetime,
    attempts: int,
    last_check: dt.datetime,
    past_deadline: bool,
) -> CollectionVerdict:
    final = answer.status in FINAL
    paid = _amount_paid(view, answer)
    # When it was paid is the provider's word: without a completion time it is not known (and
    # the time we saw it is no evidence of a late payment).
    paid_at = answer.completed_at if answer.status is TransferStatus.SUCCESSFUL else None
    fee = answer.fee if answer.status is TransferStatus.SUCCESSFUL else None
    open_: dict[FindingKind, str] = {}
    for kind, problem in (
        (FindingKind.UNDERPAID, _underpaid(view, paid)),
        (FindingKind.OVERPAID, _overpaid(view, answer, paid)),
        (FindingKind.PAID_AFTER_EXPIRY, _late(view, paid_at)),
        (FindingKind.FEE_MISMATCH, _fee(view, paid, fee)),
        (FindingKind.STALE_PENDING, _stale(answer.status, view, now, last_check, False)),
    ):
        if problem is not None:
            open_[kind] = problem
    resolved = (
        {*_PAYMENT_KINDS, FindingKind.STALE_PENDING}
        | {FindingKind.UNKNOWN_TO_PROVIDER, FindingKind.UNVERIFIABLE}
    ) - set(open_)
    # Final before the deadline: one more look at the deadline, for a payment recorded late.
    if final and (view.final_check_done or past_deadline):
        next_check: float | None = None
    elif final:
        next_check = (last_check - now).total_seconds()
    else:
        next_check = backoff_delay(attempts, policy.check_backoff, policy.check_backoff_max)
        if not past_deadline:
            next_check = min(next_check, max(0.0, (last_check - now).total_seconds()))
    confirmed = view.confirmed or final
    return CollectionVerdict(
        status=answer.status if final else view.status,
        confirmed=confirmed,
        next_check_in=next_check,
        final_check_done=view.final_check_done or past_deadline,
        check_attempts=0 if final else attempts,
        not_found_count=0,
        provider_status=answer.status,
        amount_paid=paid,
        provider_fee=fee,
        paid_at=paid_at,
        provider_reference=view.provider_reference or answer.reference,
        failure_reason=(answer.failure_reason if answer.status is TransferStatus.FAILED else None),
        initiation=Initiation.ACCEPTED if view.initiation is Initiation.INTENT else view.initiation,
        open=open_,
        resolved=frozenset(resolved),
        newly_confirmed=final and (not view.confirmed or view.status is not answer.status),
    )


def _amount_paid(view: CollectionView, answer: Found) -> int | None:
    """What the customer paid, as the provider reports it (None: nothing paid)."""
    if answer.status is TransferStatus.SUCCESSFUL:
        return answer.amount
    if answer.status is TransferStatus.FAILED and 0 < answer.amount < view.amount:
        # A failed collection reporting less than expected: an underpayment the provider
        # refused (the sandbox returns it; spec: not shown).
        return answer.amount
    return None


def _underpaid(view: CollectionView, paid: int | None) -> str | None:
    if paid is None or not 0 < paid < view.amount:
        return None
    return f"expected {view.amount} kobo; paid {paid} kobo ({view.amount - paid} kobo short)"


def _overpaid(view: CollectionView, answer: Found, paid: int | None) -> str | None:
    if answer.status is not TransferStatus.SUCCESSFUL or paid is None or paid <= view.amount:
        return None
    return (
        f"expected {view.amount} kobo; paid {paid} kobo "
        f"({paid - view.amount} kobo owed back to the customer)"
    )


def _late(view: CollectionView, paid_at: dt.datetime | None) -> str | None:
    if paid_at is None or view.expires_at is None or paid_at <= view.expires_at:
        return None
    late = int((paid_at - view.expires_at).total_seconds())
    when = paid_at.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    return f"paid at {when}, {late} s after the account expired"


def _fee(view: CollectionView, paid: int | None, fee: int | None) -> str | None:
    if paid != view.amount or fee is None or view.fee is None or fee == view.fee:
        return None
    return f"fees differ: quoted {view.fee}, provider {fee} kobo"


def _stale(
    status: TransferStatus,
    view: CollectionView,
    now: dt.datetime,
    last_check: dt.datetime,
    unknown: bool,
) -> str | None:
    if status is not TransferStatus.PENDING or unknown or now < last_check:
        return None
    since = "expiry" if view.expires_at is not None else "creation"
    age = int((now - (view.expires_at or view.created_at)).total_seconds())
    return f"still pending {age} s after its {since}"
