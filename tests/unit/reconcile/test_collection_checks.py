"""The collections' pure core: each finding opens exactly when its condition holds."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from hypothesis import example, given
from hypothesis import strategies as st

from ledger.types import FindingKind, Initiation, TransferStatus
from reconcile.checks import Found, LookupAnswer, NotFound, Transient, Uninterpretable
from reconcile.collection_checks import (
    COLLECTION_KINDS,
    CollectionPolicy,
    CollectionView,
    evaluate_collection,
)

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
EXPIRES = T0 + dt.timedelta(seconds=1800)
POLICY = CollectionPolicy(
    check_backoff=30, check_backoff_max=1800, not_found_limit=3, stale_after=1800, grace=600
)
LAST_CHECK = EXPIRES + dt.timedelta(seconds=600)
AMOUNT, QUOTE = 500_000, 5_000
S, F, P = TransferStatus.SUCCESSFUL, TransferStatus.FAILED, TransferStatus.PENDING
K = FindingKind


def view(**changes: object) -> CollectionView:
    base = CollectionView(
        reference="C1",
        amount=AMOUNT,
        fee=QUOTE,
        status=P,
        confirmed=False,
        created_at=T0,
        expires_at=EXPIRES,
        provider_reference="COL_1",
        initiation=Initiation.ACCEPTED,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def paid(
    amount: int, *, at: dt.datetime = T0, fee: int = QUOTE, status: TransferStatus = S
) -> Found:
    return Found("COL_1", "C1", amount, fee, status, None, completed_at=at)


def kinds(
    answer: LookupAnswer, now: dt.datetime = T0 + dt.timedelta(seconds=60), **changes: object
) -> set[FindingKind]:
    return set(evaluate_collection(view(**changes), answer, POLICY, now).open)


def test_paid_exactly_on_time_opens_nothing_and_confirms() -> None:
    """The amount asked for, before expiry, at the quoted fee: confirmed, no finding."""
    verdict = evaluate_collection(view(), paid(AMOUNT), POLICY, T0 + dt.timedelta(seconds=60))
    assert verdict.open == {} and verdict.confirmed and verdict.newly_confirmed
    assert verdict.status is S and verdict.amount_paid == AMOUNT and verdict.paid_at == T0
    assert verdict.resolved == COLLECTION_KINDS


def test_each_payment_finding_on_purpose() -> None:
    """Under, over, late and a wrong fee each open their own kind and nothing else."""
    late = EXPIRES + dt.timedelta(seconds=5)
    assert kinds(paid(AMOUNT - 1)) == {K.UNDERPAID}
    assert kinds(paid(100, status=F, fee=0)) == {K.UNDERPAID}
    assert kinds(paid(AMOUNT + 1, fee=QUOTE)) == {K.OVERPAID}
    assert kinds(paid(AMOUNT, at=late)) == {K.PAID_AFTER_EXPIRY}
    assert kinds(paid(AMOUNT, fee=QUOTE + 500)) == {K.FEE_MISMATCH}


def test_a_final_answer_before_the_deadline_is_looked_at_once_more() -> None:
    """Paid early: checked again at expires_at + grace, then never again."""
    early = T0 + dt.timedelta(seconds=60)
    first = evaluate_collection(view(), paid(AMOUNT), POLICY, early)
    last = evaluate_collection(
        view(status=S, confirmed=True, amount_paid=AMOUNT), paid(AMOUNT), POLICY, LAST_CHECK
    )
    assert first.next_check_in == (LAST_CHECK - early).total_seconds()
    assert not first.final_check_done
    assert last.next_check_in is None and last.final_check_done and not last.newly_confirmed


def test_pending_past_the_deadline_is_stale_and_keeps_being_checked() -> None:
    """Still pending at expires_at + grace: stale_pending, and the lookups go on."""
    verdict = evaluate_collection(view(), paid(AMOUNT, status=P), POLICY, LAST_CHECK)
    before = evaluate_collection(
        view(), paid(AMOUNT, status=P), POLICY, LAST_CHECK - dt.timedelta(seconds=1)
    )
    assert set(verdict.open) == {K.STALE_PENDING} and verdict.next_check_in is not None
    assert before.open == {} and before.next_check_in is not None and before.next_check_in <= 1


def test_not_found_three_times_is_unknown_and_garbage_is_unverifiable() -> None:
    """The not-found limit and an unreadable answer behave as for transfers."""
    assert kinds(NotFound(), not_found_count=1) == set()
    assert kinds(NotFound(), not_found_count=2) == {K.UNKNOWN_TO_PROVIDER}
    assert kinds(Uninterpretable("odd")) == {K.UNVERIFIABLE}
    assert kinds(Transient("503")) == set()
    other = Found("COL_9", "SOMEONE-ELSE", AMOUNT, QUOTE, S, None)
    assert kinds(other) == {K.UNVERIFIABLE}


def _stale_expected(v: CollectionView, status: TransferStatus, now: dt.datetime) -> bool:
    """stale_pending's condition: pending past expires_at + grace, and not unknown_to_provider."""
    return status is P and now >= LAST_CHECK and v.not_found_count < POLICY.not_found_limit


def _oracle(v: CollectionView, answer: LookupAnswer, now: dt.datetime) -> set[FindingKind] | None:
    """The kinds that must be open, stated from the definitions (None: not a Found answer)."""
    if not isinstance(answer, Found):
        return None
    if answer.merchant_reference not in (None, v.reference) and answer.reference not in (
        v.reference,
        v.provider_reference,
    ):
        # An answer about someone else says nothing of this collection: unverifiable, and the
        # ledger's own status decides stale_pending, as for any unusable answer.
        stale = {K.STALE_PENDING} if _stale_expected(v, v.status, now) else set()
        return {K.UNVERIFIABLE} | stale
    expected: set[FindingKind] = set()
    money = answer.amount
    if answer.status is S:
        if money < v.amount and money > 0:
            expected.add(K.UNDERPAID)
        if money > v.amount:
            expected.add(K.OVERPAID)
        if answer.completed_at is not None and answer.completed_at > EXPIRES:
            expected.add(K.PAID_AFTER_EXPIRY)
        if money == v.amount and answer.fee is not None and answer.fee != v.fee:
            expected.add(K.FEE_MISMATCH)
    elif answer.status is F:
        if 0 < money < v.amount:
            expected.add(K.UNDERPAID)
    elif now >= LAST_CHECK:
        expected.add(K.STALE_PENDING)
    return expected


_times = st.integers(min_value=0, max_value=8000).map(lambda s: T0 + dt.timedelta(seconds=s))
_amounts = st.sampled_from([0, 1, AMOUNT - 1, AMOUNT, AMOUNT + 1, 2**62]) | st.integers(
    min_value=0, max_value=10**9
)
_found = st.builds(
    Found,
    reference=st.sampled_from(["COL_1", "COL_X"]),
    merchant_reference=st.sampled_from([None, "C1", "C1", "OTHER"]),
    amount=_amounts,
    fee=st.none() | st.sampled_from([QUOTE, QUOTE + 1, 0]),
    status=st.sampled_from([S, F, P]),
    failure_reason=st.none() | st.text(max_size=20),
    completed_at=st.none() | _times,
)
_answers = (
    _found
    | st.just(NotFound())
    | st.builds(Uninterpretable, st.text(max_size=30))
    | st.builds(Transient, st.text(max_size=10), st.none() | st.floats(0, 3600))
)


@example(
    # Found on a fresh clone: an answer about another merchant reference on a pending
    # collection past its grace is unverifiable, and the collection is also stale_pending.
    answer=Found("COL_X", "OTHER", AMOUNT, QUOTE, S, None, completed_at=None),
    now=LAST_CHECK,
    not_found=0,
    confirmed_status=None,
    final_check_done=False,
)
@example(
    # The same answer after the not-found limit: unknown_to_provider stands instead of stale.
    answer=Found("COL_X", "OTHER", AMOUNT, QUOTE, P, None, completed_at=None),
    now=LAST_CHECK,
    not_found=3,
    confirmed_status=None,
    final_check_done=False,
)
@given(
    answer=_answers,
    now=_times,
    not_found=st.integers(0, 5),
    confirmed_status=st.sampled_from([None, S, F]),
    final_check_done=st.booleans(),
)
def test_findings_open_exactly_when_their_condition_holds(
    answer: LookupAnswer,
    now: dt.datetime,
    not_found: int,
    confirmed_status: TransferStatus | None,
    final_check_done: bool,
) -> None:
    """Over any provider answer (paid less/equal/more, before/after expiry, failed, not found,
    garbage, errors) the verdict opens exactly the kinds whose condition holds, resolves only
    kinds that are not open, and never confirms without a final answer."""
    v = view(
        not_found_count=not_found,
        final_check_done=final_check_done,
        status=confirmed_status or P,
        confirmed=confirmed_status is not None,
    )
    verdict = evaluate_collection(v, answer, POLICY, now)
    expected = _oracle(v, answer, now)
    opened = set(verdict.open)
    assert opened <= COLLECTION_KINDS
    assert not opened & verdict.resolved
    if expected is not None:
        assert opened == expected
        if K.UNVERIFIABLE not in expected:
            assert verdict.resolved == COLLECTION_KINDS - expected
    elif isinstance(answer, NotFound):
        unknown = not_found + 1 >= POLICY.not_found_limit
        assert (K.UNKNOWN_TO_PROVIDER in opened) == unknown
        assert opened - {K.STALE_PENDING} <= {K.UNKNOWN_TO_PROVIDER}
    elif isinstance(answer, Uninterpretable):
        assert K.UNVERIFIABLE in opened
    else:
        assert opened <= {K.STALE_PENDING}
    if verdict.newly_confirmed:
        assert isinstance(answer, Found) and answer.status in (S, F)
    if verdict.next_check_in is None:
        assert verdict.confirmed and verdict.final_check_done
