"""A state machine over webhook evidence and provider truth, run on the pure core."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ledger.types import FindingKind, Initiation, TransferStatus
from reconcile.checks import FINAL, Found, LedgerView, Policy, Transient, evaluate

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
POLICY = Policy(check_backoff=30, check_backoff_max=1800, not_found_limit=3, stale_after=10**9)
AMOUNT, FEE = 100_000, 1_000
K = FindingKind


class ReconcileMachine(RuleBasedStateMachine):
    """The provider's truth moves pending → final once; webhooks arrive in any order."""

    def __init__(self) -> None:
        super().__init__()
        self.truth = TransferStatus.PENDING
        self.truth_amount, self.truth_fee = AMOUNT, FEE
        self.sent: list[tuple[TransferStatus, int, int]] = []  # webhooks the provider sent
        self.view = LedgerView(
            "R1", AMOUNT, FEE, TransferStatus.PENDING, False, T0, "TRF_1", Initiation.ACCEPTED
        )
        self.open: set[FindingKind] = set()
        self.ever_conflict = False
        self.last_found: TransferStatus | None = None
        self.unchecked_evidence = False  # a webhook arrived since the last check

    @precondition(lambda self: self.truth is TransferStatus.PENDING)
    @rule(
        outcome=st.sampled_from([TransferStatus.SUCCESSFUL, TransferStatus.FAILED]),
        amount_delta=st.sampled_from([0, 0, 100]),
        fee_delta=st.sampled_from([0, 0, 500]),
    )
    def provider_completes(
        self, outcome: TransferStatus, amount_delta: int, fee_delta: int
    ) -> None:
        """The provider settles the transfer (maybe with a drifted fee or changed amount)."""
        self.truth = outcome
        self.truth_amount, self.truth_fee = AMOUNT + amount_delta, FEE + fee_delta
        self.sent.append((outcome, self.truth_amount, self.truth_fee))

    @precondition(lambda self: self.truth is TransferStatus.PENDING)
    @rule(outcome=st.sampled_from([TransferStatus.SUCCESSFUL, TransferStatus.FAILED]))
    def forged_or_early_webhook(self, outcome: TransferStatus) -> None:
        """A webhook whose outcome the provider has not (yet) reached, delivered later."""
        self.sent.append((outcome, AMOUNT, FEE))

    @precondition(lambda self: bool(self.sent))
    @rule(index=st.integers(0, 10), duplicate=st.booleans())
    def deliver(self, index: int, duplicate: bool) -> None:
        """Deliver one sent webhook (any order; a duplicate is applied once, like the receiver)."""
        status, amount, fee = self.sent[index % len(self.sent)]
        if not duplicate:
            self.sent.pop(index % len(self.sent))
        v = self.view
        if v.webhook_status is None:
            success = status is TransferStatus.SUCCESSFUL
            v = replace(
                v,
                webhook_status=status,
                webhook_amount=amount if success else None,
                webhook_fee=fee if success else None,
            )
            if not v.confirmed:
                v = replace(v, status=status)
        elif v.webhook_status is not status:
            self.ever_conflict = True  # the receiver's status_conflict; first outcome stays
            self.open.add(K.STATUS_CONFLICT)
        self.view = v
        self.unchecked_evidence = True

    @rule(transient=st.booleans())
    def check(self, transient: bool) -> None:
        """One reconciler lookup: the provider's truth, or a transient error."""
        answer = (
            Transient("503")
            if transient
            else Found("TRF_1", "R1", self.truth_amount, self.truth_fee, self.truth)
        )
        verdict = evaluate(self.view, answer, POLICY, T0)
        self.unchecked_evidence = False
        if not transient:
            self.last_found = self.truth
            if self.truth in FINAL:
                assert verdict.confirmed and verdict.status is self.truth
                if (
                    self.view.webhook_status is not None
                    and self.view.webhook_status is not self.truth
                ):
                    self.ever_conflict = True
        self.open |= set(verdict.open)
        self.open -= verdict.resolved - {K.STATUS_CONFLICT}
        self.view = replace(
            self.view,
            status=verdict.status,
            confirmed=verdict.confirmed,
            provider_status=verdict.provider_status,
            provider_amount=verdict.provider_amount,
            provider_fee=verdict.provider_fee,
            check_attempts=verdict.check_attempts,
            not_found_count=verdict.not_found_count,
        )

    @invariant()
    def confirmed_only_after_provider_agreed(self) -> None:
        """`confirmed` is true only when the last real lookup returned a final status."""
        if self.view.confirmed:
            assert self.last_found in FINAL
            assert self.view.status is self.view.provider_status

    @invariant()
    def status_follows_provider_once_confirmed(self) -> None:
        """A confirmed transfer shows the provider's status whatever the webhooks said."""
        if self.view.confirmed:
            assert self.view.status is self.truth

    @invariant()
    def amount_and_fee_findings_match_their_conditions(self) -> None:
        """After a lookup, amount/fee findings are open exactly when the figures disagree."""
        if self.view.provider_status is None or self.unchecked_evidence:
            return  # findings are raised at check time (the receiver makes it due at once)
        v = self.view
        amount_bad = v.provider_amount != AMOUNT or (
            v.webhook_amount is not None and v.webhook_amount != AMOUNT
        )
        fees = {x for x in (v.fee, v.webhook_fee, v.provider_fee) if x is not None}
        assert (K.AMOUNT_MISMATCH in self.open) == amount_bad
        assert (K.FEE_MISMATCH in self.open) == (len(fees) > 1)

    @invariant()
    def status_conflict_exactly_when_outcomes_disagreed(self) -> None:
        """status_conflict is open iff two outcomes were ever seen (and never auto-resolved)."""
        assert (K.STATUS_CONFLICT in self.open) == self.ever_conflict


TestReconcileMachine = ReconcileMachine.TestCase
TestReconcileMachine.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
