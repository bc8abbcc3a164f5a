"""Re-verification and reversals in the pure core: the ages, the schedule, the verdicts."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.types import FindingKind, ReversalSource, TransferStatus
from reconcile.checks import Found, LedgerView, NotFound, Policy, Transient, evaluate
from reconcile.reverify import ages_passed, next_reverify_in, parse_ages

T0 = dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)
AGES = (3600, 86400, 259200)
POLICY = Policy(
    check_backoff=30,
    check_backoff_max=1800,
    not_found_limit=3,
    stale_after=1800,
    reverify_after=AGES,
)


def _success(**changes: object) -> LedgerView:
    values: dict[str, object] = {
        "reference": "R1",
        "amount": 10_000,
        "fee": 100,
        "status": TransferStatus.SUCCESSFUL,
        "confirmed": True,
        "created_at": T0 - dt.timedelta(minutes=1),
        "provider_reference": "TRF_R1",
        "provider_status": TransferStatus.SUCCESSFUL,
        "provider_amount": 10_000,
        "provider_fee": 100,
        "confirmed_at": T0,
    }
    values.update(changes)
    return LedgerView(**values)  # type: ignore[arg-type]


def _found(status: TransferStatus, reason: str | None = None) -> Found:
    return Found("TRF_R1", "R1", 10_000, 100, status, reason)


@pytest.mark.parametrize(
    ("text", "ages"),
    [
        ("1h,24h,72h", AGES),
        (" 2S , 1m ", (2, 60)),
        ("90", (90,)),
        ("1d", (86400,)),
        ("off", ()),
        ("OFF", ()),
    ],
)
def test_ages_are_read_in_seconds(text: str, ages: tuple[int, ...]) -> None:
    """A comma list of whole durations (s, m, h, d; bare seconds) or `off`."""
    assert parse_ages(text) == ages


@pytest.mark.parametrize(
    "text", ["", "1h,", "1.5h", "1w", "-1h", "0s", "1h,1h", "2h,1h", "١h", "1h;2h", "99999999d"]
)
def test_bad_age_lists_are_refused(text: str) -> None:
    """Empty items, fractions, unknown units, zero, non-increasing or non-ASCII ages fail."""
    with pytest.raises(ValueError, match=r"age|more than|later"):
        parse_ages(text)


@given(
    st.lists(st.integers(1, 10**6), min_size=1, max_size=8, unique=True), st.integers(0, 2 * 10**6)
)
def test_the_next_age_is_after_every_age_passed(raw: list[int], elapsed: int) -> None:
    """After counting the ages passed at any instant, the next one (if any) is still ahead."""
    ages = tuple(sorted(raw))
    now = T0 + dt.timedelta(seconds=elapsed)
    done = ages_passed(T0, now, ages, 0)
    assert done == len([a for a in ages if a <= elapsed])
    wait = next_reverify_in(T0, now, ages, done)
    assert (wait is None) == (done == len(ages))
    if wait is not None:
        assert wait == ages[done] - elapsed > 0


def test_a_new_success_is_due_at_the_first_age() -> None:
    """Confirming a success schedules the first re-verification one age later."""
    view = _success(status=TransferStatus.PENDING, confirmed=False, confirmed_at=None)
    verdict = evaluate(view, _found(TransferStatus.SUCCESSFUL), POLICY, T0)
    assert (verdict.newly_confirmed, verdict.next_check_in, verdict.reverify_done) == (
        True,
        3600,
        0,
    )
    assert not verdict.reverified


def test_re_verification_walks_the_ages_then_stops() -> None:
    """Each age answered successful moves to the next; after the last nothing is due."""
    done = 0
    for age, wait in zip(AGES, (86400 - 3600, 259200 - 86400, None), strict=True):
        now = T0 + dt.timedelta(seconds=age)
        verdict = evaluate(
            _success(reverify_done=done), _found(TransferStatus.SUCCESSFUL), POLICY, now
        )
        assert verdict.reverified and verdict.reversal is None and not verdict.open
        assert verdict.next_check_in == wait
        done = verdict.reverify_done
    assert done == 3


def test_a_provider_error_is_retried_without_spending_the_age() -> None:
    """A 5xx at an age is retried after the backoff; the age still counts as not done."""
    now = T0 + dt.timedelta(seconds=3600)
    verdict = evaluate(_success(), Transient("503"), POLICY, now)
    assert (verdict.next_check_in, verdict.reverify_done, verdict.status) == (
        30,
        0,
        TransferStatus.SUCCESSFUL,
    )


def test_re_verification_off_leaves_a_success_settled() -> None:
    """With `off` a confirmed success is not due again."""
    policy = Policy(check_backoff=30, check_backoff_max=1800, not_found_limit=3, stale_after=1800)
    view = _success(status=TransferStatus.PENDING, confirmed=False, confirmed_at=None)
    assert evaluate(view, _found(TransferStatus.SUCCESSFUL), policy, T0).next_check_in is None


@pytest.mark.parametrize(
    ("webhook", "source"),
    [
        (None, ReversalSource.LOOKUP),
        (TransferStatus.SUCCESSFUL, ReversalSource.LOOKUP),
        (TransferStatus.FAILED, ReversalSource.WEBHOOK),
    ],
)
def test_a_success_now_failed_is_a_reversal(
    webhook: TransferStatus | None, source: ReversalSource
) -> None:
    """A confirmed success answered failed is reversed (final, still confirmed), found by the
    webhook when one said failed; an earlier success webhook is no status conflict."""
    view = _success(webhook_status=webhook)
    verdict = evaluate(
        view, _found(TransferStatus.FAILED, "Recalled"), POLICY, T0 + dt.timedelta(hours=2)
    )
    assert (verdict.status, verdict.confirmed, verdict.next_check_in) == (
        TransferStatus.REVERSED,
        True,
        None,
    )
    assert verdict.reversal is not None
    assert (verdict.reversal.reason, verdict.reversal.source) == ("Recalled", source)
    assert FindingKind.STATUS_CONFLICT not in verdict.open and not verdict.newly_confirmed


def test_a_failed_transfer_answered_failed_is_no_reversal() -> None:
    """Only a success can be reversed: a confirmed failure answered failed stays failed."""
    view = _success(status=TransferStatus.FAILED, provider_status=TransferStatus.FAILED)
    verdict = evaluate(view, _found(TransferStatus.FAILED), POLICY, T0)
    assert verdict.reversal is None and verdict.status is TransferStatus.FAILED


@pytest.mark.parametrize(
    ("answer", "conflict", "next_in"),
    [
        (Found("TRF_R1", "R1", 10_000, 100, TransferStatus.SUCCESSFUL), True, None),
        (Found("TRF_R1", "R1", 10_000, 100, TransferStatus.FAILED), False, None),
        (Found("TRF_R1", "R1", 10_000, 100, TransferStatus.PENDING), False, None),
        (NotFound(), False, None),
        (Transient("timeout"), False, 30),
    ],
)
def test_a_reversal_is_never_undone(answer: object, conflict: bool, next_in: float | None) -> None:
    """Whatever the provider answers after a reversal the transfer stays reversed; `successful`
    is a status_conflict; only provider errors are tried again."""
    view = _success(status=TransferStatus.REVERSED, reverify_done=1)
    verdict = evaluate(view, answer, POLICY, T0 + dt.timedelta(days=5))  # type: ignore[arg-type]
    assert (verdict.status, verdict.confirmed, verdict.reversal) == (
        TransferStatus.REVERSED,
        True,
        None,
    )
    assert (FindingKind.STATUS_CONFLICT in verdict.open) is conflict
    assert verdict.next_check_in == next_in
