"""The reconciler's pure core: verdicts and findings for every kind of evidence."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.types import FindingKind, Initiation, TransferStatus
from reconcile.checks import (
    Found,
    LedgerView,
    NotFound,
    Policy,
    Transient,
    Uninterpretable,
    backoff_delay,
    evaluate,
)
from reconcile.fees import parse_fee_schedule

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
NOW = T0 + dt.timedelta(seconds=60)
POLICY = Policy(check_backoff=30, check_backoff_max=1800, not_found_limit=3, stale_after=1800)
S, F, P = TransferStatus.SUCCESSFUL, TransferStatus.FAILED, TransferStatus.PENDING
K = FindingKind


def view(**changes: object) -> LedgerView:
    base = LedgerView(
        reference="R1",
        amount=100_000,
        fee=1_000,
        status=P,
        confirmed=False,
        created_at=T0,
        provider_reference="TRF_1",
        initiation=Initiation.ACCEPTED,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def found(status: TransferStatus = S, amount: int = 100_000, fee: int | None = 1_000) -> Found:
    return Found("TRF_1", "R1", amount, fee, status, "declined" if status is F else None)


CASES = [
    # (id, view changes, answer, expected status, confirmed, open kinds)
    ("agrees", {}, found(), S, True, set()),
    ("failed agrees", {}, found(F), F, True, set()),
    ("provider pending", {}, found(P), P, False, set()),
    ("amount differs", {}, found(amount=100_100), S, True, {K.AMOUNT_MISMATCH}),
    ("fee drift", {}, found(fee=1_500), S, True, {K.FEE_MISMATCH}),
    (
        "webhook amount tampered",
        {"webhook_status": S, "webhook_amount": 100_100, "webhook_fee": 1_000},
        found(),
        S,
        True,
        {K.AMOUNT_MISMATCH},
    ),
    (
        "webhook fee tampered",
        {"webhook_status": S, "webhook_amount": 100_000, "webhook_fee": 1_050},
        found(),
        S,
        True,
        {K.FEE_MISMATCH},
    ),
    (
        "webhook success, provider failed",
        {"webhook_status": S, "status": S},
        found(F),
        F,
        True,
        {K.STATUS_CONFLICT},
    ),
    (
        "webhook failed, provider success",
        {"webhook_status": F, "status": F},
        found(S),
        S,
        True,
        {K.STATUS_CONFLICT},
    ),
    (
        "webhook success, provider pending",
        {"webhook_status": S, "status": S},
        found(P),
        S,
        False,
        set(),
    ),
    (
        "orphan has no amount check",
        {
            "amount": None,
            "fee": None,
            "webhook_status": S,
            "webhook_amount": 5,
            "webhook_fee": 1_000,
        },
        found(amount=7),
        S,
        True,
        set(),
    ),
    ("first not found", {}, NotFound(), P, False, set()),
    ("third not found", {"not_found_count": 2}, NotFound(), P, False, {K.UNKNOWN_TO_PROVIDER}),
    ("uninterpretable", {}, Uninterpretable("garbage"), P, False, {K.UNVERIFIABLE}),
    ("transient", {}, Transient("503"), P, False, set()),
    ("foreign answer", {}, Found("TRF_9", "OTHER", 1, 1, S), P, False, {K.UNVERIFIABLE}),
]


@pytest.mark.parametrize(
    ("changes", "answer", "status", "confirmed", "kinds"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_verdict_table(
    changes: dict[str, object],
    answer: object,
    status: TransferStatus,
    confirmed: bool,
    kinds: set[FindingKind],
) -> None:
    """Each kind of evidence gives the expected status, confirmation and open findings."""
    verdict = evaluate(view(**changes), answer, POLICY, NOW)  # type: ignore[arg-type]
    assert verdict.status is status
    assert verdict.confirmed is confirmed
    assert set(verdict.open) == kinds


def test_final_answer_stops_checking_and_resolves_recoverable_findings() -> None:
    """A final provider answer clears next check, attempts and the not-found/unverifiable kinds."""
    verdict = evaluate(view(check_attempts=4, not_found_count=2), found(), POLICY, NOW)
    assert verdict.next_check_in is None
    assert verdict.check_attempts == 0
    assert verdict.not_found_count == 0
    assert {K.UNKNOWN_TO_PROVIDER, K.UNVERIFIABLE, K.AMOUNT_MISMATCH} <= verdict.resolved


def test_status_conflict_is_never_resolved_by_the_core() -> None:
    """Agreement later does not list status_conflict among the resolved kinds."""
    verdict = evaluate(view(webhook_status=S, status=S), found(S), POLICY, NOW)
    assert K.STATUS_CONFLICT not in verdict.resolved
    assert K.STATUS_CONFLICT not in verdict.open


def test_pending_backs_off_doubling() -> None:
    """A pending answer pushes the next check out by the doubling backoff."""
    delays = [
        evaluate(view(check_attempts=n), found(P), POLICY, NOW).next_check_in for n in range(8)
    ]
    assert delays == [30, 60, 120, 240, 480, 960, 1800, 1800]


def test_retry_after_wins_when_longer() -> None:
    """A 429's Retry-After replaces the backoff only when it is longer."""
    assert evaluate(view(), Transient("429", retry_after=90), POLICY, NOW).next_check_in == 90
    assert evaluate(view(), Transient("429", retry_after=5), POLICY, NOW).next_check_in == 30


def test_transient_error_is_a_provider_error_without_finding() -> None:
    """A transient error counts as a provider error and opens nothing."""
    verdict = evaluate(view(), Transient("timeout"), POLICY, NOW)
    assert verdict.provider_error
    assert verdict.open == {}


def test_stale_pending_after_stale_after_and_resolved_when_final() -> None:
    """Pending past stale_after opens stale_pending; leaving pending resolves it."""
    late = T0 + dt.timedelta(seconds=1800)
    assert K.STALE_PENDING in evaluate(view(), found(P), POLICY, late).open
    assert K.STALE_PENDING not in evaluate(view(), found(P), POLICY, late - dt.timedelta(1)).open
    assert K.STALE_PENDING in evaluate(view(), found(S), POLICY, late).resolved


def test_lost_intent_found_becomes_accepted() -> None:
    """An intent whose answer was lost is accepted once the lookup finds it."""
    verdict = evaluate(
        view(initiation=Initiation.INTENT, provider_reference=None, fee=None), found(), POLICY, NOW
    )
    assert verdict.initiation is Initiation.ACCEPTED
    assert verdict.provider_reference == "TRF_1"


def test_confirmed_transfer_keeps_its_status_on_a_failed_recheck() -> None:
    """A late webhook cannot move a confirmed transfer while the provider cannot be asked."""
    settled = view(status=S, confirmed=True, provider_status=S, webhook_status=F)
    verdict = evaluate(settled, Transient("503"), POLICY, NOW)
    assert verdict.status is S
    assert verdict.confirmed


def test_fee_over_contract_schedule() -> None:
    """A provider fee above the contract tier is a fee mismatch even when all figures agree."""
    policy = replace(POLICY, fee_schedule=parse_fee_schedule("0-500000:500,500001-:900"))
    verdict = evaluate(view(), found(), policy, NOW)
    assert "exceeds the contract fee" in verdict.open[K.FEE_MISMATCH]


def test_backoff_arithmetic_edges() -> None:
    """Zero base means no wait; huge attempt counts stay at the cap."""
    assert backoff_delay(1, 0, 100) == 0
    assert backoff_delay(0, 30, 100) == 0
    assert backoff_delay(10_000, 30, 1800) == 1800


statuses = st.sampled_from([S, F, P])
kobo = st.integers(min_value=0, max_value=2**63 - 1)


@given(
    amount=st.one_of(st.none(), kobo),
    fee=st.one_of(st.none(), kobo),
    webhook_status=st.one_of(st.none(), st.sampled_from([S, F])),
    webhook_amount=st.one_of(st.none(), kobo),
    webhook_fee=st.one_of(st.none(), kobo),
    provider=st.tuples(statuses, kobo, st.one_of(st.none(), kobo)),
    not_found_count=st.integers(0, 10),
)
def test_findings_hold_exactly_when_their_condition_holds(
    amount: int | None,
    fee: int | None,
    webhook_status: TransferStatus | None,
    webhook_amount: int | None,
    webhook_fee: int | None,
    provider: tuple[TransferStatus, int, int | None],
    not_found_count: int,
) -> None:
    """For any evidence, each finding kind is open iff its PRODUCT.md condition holds."""
    status, p_amount, p_fee = provider
    v = view(
        amount=amount,
        fee=fee,
        webhook_status=webhook_status,
        webhook_amount=webhook_amount,
        webhook_fee=webhook_fee,
        not_found_count=not_found_count,
    )
    verdict = evaluate(v, found(status, p_amount, p_fee), POLICY, NOW)
    amount_bad = amount is not None and (
        p_amount != amount or (webhook_amount is not None and webhook_amount != amount)
    )
    fees = {x for x in (fee, webhook_fee, p_fee) if x is not None}
    conflict = status is not P and webhook_status is not None and webhook_status is not status
    assert (K.AMOUNT_MISMATCH in verdict.open) == amount_bad
    assert (K.FEE_MISMATCH in verdict.open) == (len(fees) > 1)
    assert (K.STATUS_CONFLICT in verdict.open) == conflict
    assert verdict.confirmed == (status is not P)
    assert K.UNKNOWN_TO_PROVIDER not in verdict.open
    assert not set(verdict.open) & verdict.resolved


@given(count=st.integers(0, 20), limit=st.integers(1, 10))
def test_unknown_to_provider_after_exactly_limit_not_found(count: int, limit: int) -> None:
    """unknown_to_provider opens on the limit-th consecutive not-found answer, not before."""
    verdict = evaluate(
        view(not_found_count=count), NotFound(), replace(POLICY, not_found_limit=limit), NOW
    )
    assert verdict.not_found_count == count + 1
    assert (K.UNKNOWN_TO_PROVIDER in verdict.open) == (count + 1 >= limit)


def test_a_confirmed_transfer_the_provider_forgot_is_one_finding_then_left_alone() -> None:
    """Not found past the limit on a transfer the provider confirmed: its outcome stands, one
    unknown_to_provider saying so, and no further lookup; an unconfirmed one is still asked."""
    confirmed = view(status=S, confirmed=True, provider_status=S, not_found_count=2)
    verdict = evaluate(confirmed, NotFound(), POLICY, NOW)
    earlier = evaluate(replace(confirmed, not_found_count=0), NotFound(), POLICY, NOW)
    pending = evaluate(view(not_found_count=2), NotFound(), POLICY, NOW)
    assert verdict.status is S and verdict.confirmed
    assert set(verdict.open) == {K.UNKNOWN_TO_PROVIDER}
    assert "confirmed this transfer successful before" in verdict.open[K.UNKNOWN_TO_PROVIDER]
    assert verdict.next_check_in is None
    assert earlier.open == {} and earlier.next_check_in is not None
    assert K.UNKNOWN_TO_PROVIDER in pending.open and pending.next_check_in is not None
