"""The reconciler's pure core: ledger view + provider answer → new state and findings.

No I/O here. The transfers' book (`reconcile.books.transfers`) reads a `LedgerView` from
the row, the lookup turns the provider's answer (or error) into a `LookupAnswer`
(`reconcile.answers`), `evaluate` gives the `Verdict`, and the recorder writes it back.
Findings are stated as a set of kinds that must be open (`open`, with their detail) and
kinds whose cause is gone (`resolved`); kinds in neither are left as they are (docs/rules.md:
raised once, resolved when the cause goes away).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from ledger.types import FindingKind, Initiation, ReversalSource, TransferStatus
from reconcile.alert_plan import AlertRules
from reconcile.answers import (
    Found,
    LookupAnswer,
    NotFound,
    Transient,
    Uninterpretable,
    answered_for_another,
    backoff_delay,
    read_without_figures,
)
from reconcile.fees import FeeSchedule
from reconcile.reverify import ages_passed, next_reverify_in

# The answers are re-exported: the transfer core is where most readers look for them.
__all__ = [
    "DEFAULT_STALE_AFTER",
    "FINAL",
    "Found",
    "LedgerView",
    "LookupAnswer",
    "NotFound",
    "Policy",
    "Transient",
    "Uninterpretable",
    "Verdict",
    "amount_problem",
    "backoff_delay",
    "contract_fee_in",
    "evaluate",
    "fee_problem",
]

FINAL = frozenset({TransferStatus.SUCCESSFUL, TransferStatus.FAILED})
_OVER_CONTRACT = "exceeds the contract fee"
# The detail records the contract fee in force at the check: advice reads it back from there
# rather than from today's PAYRECON_FEE_SCHEDULE, which reports do not know.
_CONTRACT_FEE = re.compile(_OVER_CONTRACT + r" (\d+) kobo")
# What an answer settles whatever else it says.
_FOUND_RESOLVES = frozenset({FindingKind.UNKNOWN_TO_PROVIDER, FindingKind.UNVERIFIABLE})


# PAYRECON_STALE_AFTER's default, here beside the rule it feeds: settings and reports read it.
DEFAULT_STALE_AFTER = 1800


@dataclass(frozen=True)
class Policy:
    """The settings the core needs (PAYRECON_CHECK_BACKOFF…, _NOT_FOUND_LIMIT, _STALE_AFTER);
    no defaults here: the settings hold them, and the poller builds this from them."""

    check_backoff: int
    check_backoff_max: int
    not_found_limit: int
    stale_after: int
    fee_schedule: FeeSchedule | None = None
    # How the pass's alerts group (PAYRECON_ALERT_GROUP_AFTER…): handed to reconcile.alerts.
    alerting: AlertRules = field(default_factory=AlertRules)
    # PAYRECON_REVERIFY_AFTER in seconds, growing; () is `off` (docs/rules.md: Reversals).
    reverify_after: tuple[int, ...] = ()


@dataclass(frozen=True)
class LedgerView:
    """What the ledger knows of one transfer before this check."""

    reference: str
    amount: int | None  # expected; None for an orphan first heard of in a webhook
    fee: int | None  # quoted at initiation (or registered)
    status: TransferStatus
    confirmed: bool
    created_at: dt.datetime
    provider_reference: str | None = None
    initiation: Initiation | None = None
    webhook_status: TransferStatus | None = None
    webhook_amount: int | None = None
    webhook_fee: int | None = None
    provider_status: TransferStatus | None = None
    provider_amount: int | None = None
    provider_fee: int | None = None
    failure_reason: str | None = None
    check_attempts: int = 0
    not_found_count: int = 0
    confirmed_at: dt.datetime | None = None
    reverify_done: int = 0  # ages of PAYRECON_REVERIFY_AFTER already looked at


@dataclass(frozen=True)
class Reversal:
    """A confirmed success the provider now calls failed (docs/rules.md: Reversals)."""

    reason: str
    source: ReversalSource


@dataclass(frozen=True)
class Verdict:
    """The new state of the transfer and what must happen to its findings."""

    status: TransferStatus
    confirmed: bool
    next_check_in: float | None  # seconds from now; None = nothing more to check
    check_attempts: int
    not_found_count: int
    provider_status: TransferStatus | None
    provider_amount: int | None
    provider_fee: int | None
    provider_reference: str | None
    failure_reason: str | None
    initiation: Initiation | None
    open: dict[FindingKind, str] = field(default_factory=dict)
    resolved: frozenset[FindingKind] = frozenset()
    newly_confirmed: bool = False
    provider_error: bool = False
    reverify_done: int = 0
    reverified: bool = False  # a confirmed success was looked up again and answered
    reversal: Reversal | None = None  # the shell records it through ledger.reversals


def amount_problem(view: LedgerView, provider_amount: int | None) -> str | None:
    """Why the amounts disagree with the expected one, or None when they agree."""
    if view.amount is None:
        return None  # an orphan: nothing was expected, so nothing to compare
    parts = [
        f"{name} amount {value}"
        for name, value in (("provider", provider_amount), ("webhook", view.webhook_amount))
        if value is not None and value != view.amount
    ]
    if not parts:
        return None
    return f"expected {view.amount} kobo; " + ", ".join(parts) + " kobo"


def fee_problem(
    view: LedgerView, provider_fee: int | None, amount: int | None, schedule: FeeSchedule | None
) -> str | None:
    """Why the fees disagree (quote, webhook, provider, contract), or None when they agree."""
    figures = [
        (name, value)
        for name, value in (
            ("quoted", view.fee),
            ("webhook", view.webhook_fee),
            ("provider", provider_fee),
        )
        if value is not None
    ]
    problems = []
    if len({value for _, value in figures}) > 1:
        problems.append("fees differ: " + ", ".join(f"{n} {v}" for n, v in figures) + " kobo")
    contract = None if amount is None or schedule is None else schedule.fee_for(amount)
    if contract is not None:
        over = [
            (name, value)
            for name, value in (("provider", provider_fee), ("webhook", view.webhook_fee))
            if value is not None and value > contract
        ]
        if over:
            problems.append(
                ", ".join(f"{n} fee {v}" for n, v in over)
                + f" kobo {_OVER_CONTRACT} {contract} kobo"
            )
    return "; ".join(problems) if problems else None


def contract_fee_in(detail: str) -> int | None:
    """The contract fee a `fee_mismatch` detail (from `fee_problem`) says was exceeded, if any."""
    match = _CONTRACT_FEE.search(detail)
    return int(match.group(1)) if match else None


def _stale(
    status: TransferStatus, view: LedgerView, policy: Policy, now: dt.datetime, unknown: bool
) -> str | None:
    # A transfer the provider does not know is flagged unknown_to_provider instead.
    if status is not TransferStatus.PENDING or unknown:
        return None
    age = (now - view.created_at).total_seconds()
    if age < policy.stale_after:
        return None
    return f"pending for {int(age)} s (limit {policy.stale_after} s)"


@dataclass(frozen=True)
class _Reading:
    """What one answer says of the transfer, before its status is settled."""

    provider_status: TransferStatus | None
    provider_amount: int | None
    provider_fee: int | None
    provider_reference: str | None
    failure_reason: str | None
    initiation: Initiation | None
    not_found: int
    next_check_in: float | None
    provider_error: bool = False
    open: dict[FindingKind, str] = field(default_factory=dict)
    resolved: frozenset[FindingKind] = frozenset()


@dataclass(frozen=True)
class _Settled:
    """The transfer's status after the answer, and whether the provider has confirmed it."""

    status: TransferStatus
    confirmed: bool
    final: bool  # the provider gave a final status: nothing more to check
    conflict: str | None = None  # the webhook said another final status


def evaluate(view: LedgerView, answer: LookupAnswer, policy: Policy, now: dt.datetime) -> Verdict:
    """Apply one provider answer to one transfer; the verdict the ledger must reflect."""
    answer = _attributed(view, answer)
    attempts = view.check_attempts + 1
    reading = _read(view, answer, policy, attempts)
    after_success = _settle_after_success(view, answer)
    settled, reversal = after_success or (_settle(view, answer), None)
    open_, resolved = _findings(view, reading, settled, policy, now)
    # A confirmed transfer the provider can no longer find (its records were lost or purged:
    # a restored or restarted provider) keeps the outcome the provider confirmed. It is news,
    # one unknown_to_provider finding, and then it is not looked up again: asking on would
    # only repeat the same answer. A new webhook for it makes it due again.
    forgotten = view.confirmed and FindingKind.UNKNOWN_TO_PROVIDER in open_
    next_check_in = None if settled.final or forgotten else reading.next_check_in
    reverify_done = view.reverify_done
    if settled.final and settled.status is TransferStatus.SUCCESSFUL and policy.reverify_after:
        # A settled success is due again at its next age (reconcile/reverify.py).
        since = view.confirmed_at if view.confirmed and view.confirmed_at else now
        done = view.reverify_done if view.confirmed else 0
        reverify_done = ages_passed(since, now, policy.reverify_after, done)
        next_check_in = next_reverify_in(since, now, policy.reverify_after, reverify_done)
    return Verdict(
        status=settled.status,
        confirmed=settled.confirmed,
        next_check_in=next_check_in,
        check_attempts=0 if settled.final else attempts,
        not_found_count=reading.not_found,
        provider_status=reading.provider_status,
        provider_amount=reading.provider_amount,
        provider_fee=reading.provider_fee,
        provider_reference=reading.provider_reference,
        failure_reason=reading.failure_reason,
        initiation=reading.initiation,
        open=open_,
        resolved=resolved,
        newly_confirmed=settled.confirmed and not view.confirmed,
        provider_error=reading.provider_error,
        reverify_done=reverify_done,
        reverified=(
            view.confirmed
            and view.status is TransferStatus.SUCCESSFUL
            and isinstance(answer, Found)
        ),
        reversal=reversal,
    )


def _attributed(view: LedgerView, answer: LookupAnswer) -> LookupAnswer:
    """`answer`, or an uninterpretable one when the provider answered for another transfer."""
    if isinstance(answer, Found) and answered_for_another(
        view.reference, view.provider_reference, answer
    ):
        return Uninterpretable(
            f"lookup of {view.reference} answered for merchant reference "
            f"{answer.merchant_reference!r}"
        )
    return answer


def _read(view: LedgerView, answer: LookupAnswer, policy: Policy, attempts: int) -> _Reading:
    """The provider's figures, the not-found count, the next check and the answer's findings."""
    delay = backoff_delay(attempts, policy.check_backoff, policy.check_backoff_max)
    if isinstance(answer, Found):
        return _Reading(
            provider_status=answer.status,
            provider_amount=answer.amount,
            provider_fee=answer.fee,
            provider_reference=view.provider_reference or answer.reference,
            failure_reason=(
                answer.failure_reason
                if answer.status is TransferStatus.FAILED and answer.failure_reason
                else view.failure_reason
            ),
            # An initiation whose answer was lost is found: it did go through.
            initiation=(
                Initiation.ACCEPTED if view.initiation is Initiation.INTENT else view.initiation
            ),
            not_found=0,
            next_check_in=delay,
            resolved=_FOUND_RESOLVES,
        )
    # No figures in this answer: the provider's last known ones stand.
    said = read_without_figures(
        answer,
        not_found_count=view.not_found_count,
        not_found_limit=policy.not_found_limit,
        delay=delay,
    )
    open_ = dict(said.open)
    if view.confirmed and FindingKind.UNKNOWN_TO_PROVIDER in open_:
        open_[FindingKind.UNKNOWN_TO_PROVIDER] += (
            f" although it confirmed this transfer {view.status.value} before; no longer looked up"
        )
    return _Reading(
        provider_status=view.provider_status,
        provider_amount=view.provider_amount,
        provider_fee=view.provider_fee,
        provider_reference=view.provider_reference,
        failure_reason=view.failure_reason,
        initiation=view.initiation,
        not_found=said.not_found,
        next_check_in=said.next_check_in,
        provider_error=said.provider_error,
        open=open_,
        resolved=said.resolved,
    )


def _settle(view: LedgerView, answer: LookupAnswer) -> _Settled:
    """The status the ledger shows after `answer`: the provider's when final, else the webhook's."""
    if isinstance(answer, Found) and answer.status in FINAL:
        conflict = None
        if view.webhook_status in FINAL and view.webhook_status is not answer.status:
            conflict = f"webhook said {view.webhook_status}, provider says {answer.status}"
        return _Settled(answer.status, confirmed=True, final=True, conflict=conflict)
    # Provider pending or no usable answer: a webhook's outcome stands, unconfirmed.
    if view.confirmed and view.status in FINAL:
        # An earlier provider answer settled it; a late webhook cannot.
        return _Settled(view.status, confirmed=True, final=False)
    status = view.webhook_status if view.webhook_status in FINAL else TransferStatus.PENDING
    return _Settled(status, confirmed=False, final=False)


def _settle_after_success(
    view: LedgerView, answer: LookupAnswer
) -> tuple[_Settled, Reversal | None] | None:
    """The status after `answer` when a success's later life decides it (docs/rules.md:
    Reversals), else None: a confirmed success the provider now calls failed is reversed
    (found by a webhook when one said failed, else by the lookup), and a reversed transfer
    stays reversed whatever comes after, a `successful` answer being a status_conflict."""
    found = answer if isinstance(answer, Found) else None
    if view.status is TransferStatus.REVERSED:
        conflict = None
        if found is not None and found.status is TransferStatus.SUCCESSFUL:
            conflict = (
                "the provider answers successful for a transfer it reversed; the reversal stands"
            )
        # Provider errors are retried with backoff as for any lookup; any answer settles it.
        final = isinstance(answer, Found | NotFound)
        return _Settled(
            TransferStatus.REVERSED, confirmed=True, final=final, conflict=conflict
        ), None
    if (
        view.confirmed
        and view.status is TransferStatus.SUCCESSFUL
        and found is not None
        and found.status is TransferStatus.FAILED
    ):
        source = (
            ReversalSource.WEBHOOK
            if view.webhook_status is TransferStatus.FAILED
            else ReversalSource.LOOKUP
        )
        reason = found.failure_reason or "the provider now answers failed"
        # The success was true when confirmed: an earlier success webhook is no conflict.
        return _Settled(TransferStatus.REVERSED, confirmed=True, final=True), Reversal(
            reason, source
        )
    return None


def _findings(
    view: LedgerView, reading: _Reading, settled: _Settled, policy: Policy, now: dt.datetime
) -> tuple[dict[FindingKind, str], frozenset[FindingKind]]:
    """The kinds that must be open (with their detail) and the kinds whose cause is gone."""
    open_ = dict(reading.open)
    if settled.conflict is not None:
        open_[FindingKind.STATUS_CONFLICT] = settled.conflict
    resolved = set(reading.resolved)
    # Checked on every answer, whatever it was: each is opened or resolved here.
    amount = view.amount if view.amount is not None else reading.provider_amount
    unknown = reading.not_found >= policy.not_found_limit
    for kind, problem in (
        (FindingKind.AMOUNT_MISMATCH, amount_problem(view, reading.provider_amount)),
        (
            FindingKind.FEE_MISMATCH,
            fee_problem(view, reading.provider_fee, amount, policy.fee_schedule),
        ),
        (FindingKind.STALE_PENDING, _stale(settled.status, view, policy, now, unknown)),
    ):
        if problem is not None:
            open_[kind] = problem
        else:
            resolved.add(kind)
    return open_, frozenset(resolved - set(open_))
