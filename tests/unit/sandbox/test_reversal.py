"""Reversals of successful transfers: by hand and by the reverse_after_success fault."""

from __future__ import annotations

import pytest

from sandbox.config import SandboxConfig
from sandbox.errors import ConfigError, ConflictError, NotFoundError
from sandbox.faults import REVERSAL_REASON, Faults, parse_faults
from sandbox.journal import Kind
from sandbox.models import EventType
from sandbox.state import World

GOOD = ("044", "0440000017")
DORMANT = ("058", "0589999929")
PENDING = ("058", "0589999936")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_780_000_000.0

    def __call__(self) -> float:
        return self.now


def _world(faults: Faults | None = None) -> tuple[World, Clock]:
    clock = Clock()
    config = SandboxConfig(
        webhook_url="http://127.0.0.1:9/hook",
        seed=11,
        complete_after=1.0,
        wallet_balance=10_000_000,
        faults=faults or Faults(),
    )
    return World(config, clock=clock), clock


def _succeeded(world: World, clock: Clock, reference: str, amount: int = 100_000) -> None:
    world.initiate_transfer(
        amount=amount, bank_code=GOOD[0], account_number=GOOD[1], reference=reference
    )
    clock.now += 1.0
    world.complete_due(clock.now)


def test_reverse_makes_the_lookup_failed_and_credits_the_amount_only():
    """A reversed success looks up failed with the reason; the wallet gets the amount, not
    the fee, back."""
    world, clock = _world()
    _succeeded(world, clock, "r1")
    before = world.balance
    event = world.reverse("r1", "Beneficiary bank recalled it", webhook=True)
    lookup = world.transaction("r1")
    assert (lookup["status"], lookup["failure_reason"]) == (
        "failed",
        "Beneficiary bank recalled it",
    )
    assert lookup["fee"] == 1_000
    assert world.balance == before + 100_000
    assert event is not None and event.event is EventType.TRANSFER_FAILED
    assert event.data == {
        "reference": lookup["reference"],
        "merchant_reference": "r1",
        "status": "failed",
        "failure_reason": "Beneficiary bank recalled it",
    }
    assert world.transfer_view("r1")["reversed_at"] is not None


def test_reverse_accepts_the_provider_reference_and_can_skip_the_webhook():
    """The provider's reference works too, and `webhook: false` makes no event."""
    world, clock = _world()
    _succeeded(world, clock, "r2")
    provider_reference = world.transaction("r2")["reference"]
    assert world.reverse(provider_reference, "x", webhook=False) is None
    assert world.transaction("r2")["status"] == "failed"


def test_reverse_refuses_unknown_pending_failed_and_already_reversed():
    """Unknown is 404; pending, failed or already reversed is 409 and moves nothing."""
    world, clock = _world()
    world.initiate_transfer(
        amount=100, bank_code=PENDING[0], account_number=PENDING[1], reference="slow"
    )
    world.initiate_transfer(
        amount=100, bank_code=DORMANT[0], account_number=DORMANT[1], reference="dormant"
    )
    _succeeded(world, clock, "twice")
    world.reverse("twice", "first", webhook=False)
    balance = world.balance
    with pytest.raises(NotFoundError):
        world.reverse("nobody", "x", webhook=True)
    for reference in ("slow", "dormant", "twice"):
        with pytest.raises(ConflictError):
            world.reverse(reference, "x", webhook=True)
    assert world.balance == balance
    assert world.transaction("twice")["failure_reason"] == "first"


def test_reverse_after_success_fires_that_many_seconds_later_and_not_before():
    """With the fault at 1 a success is reversed `reverse_after_seconds` after it succeeded,
    with the documented reason and a reversal credit in the journal."""
    world, clock = _world(Faults(reverse_after_success=1.0, reverse_after_seconds=30.0))
    _succeeded(world, clock, "auto")
    assert world.next_due() == clock.now + 30.0
    assert world.complete_due(clock.now + 29.0) == []
    assert world.transaction("auto")["status"] == "successful"
    clock.now += 30.0
    (event,) = world.complete_due(clock.now)
    assert event.event is EventType.TRANSFER_FAILED
    assert world.transaction("auto")["failure_reason"] == REVERSAL_REASON
    assert world.movements()[-1].kind is Kind.REVERSAL
    assert "reverse_after_success" in world.transfer_view("auto")["faults"]
    assert world.next_due() is None


def test_reverse_after_success_spares_failures_and_a_rate_of_zero():
    """A failed transfer is never reversed, nor any transfer without the fault."""
    world, clock = _world(Faults(reverse_after_success=1.0))
    world.initiate_transfer(
        amount=100, bank_code=DORMANT[0], account_number=DORMANT[1], reference="d"
    )
    clock.now += 1.0
    world.complete_due(clock.now)
    assert world.next_due() is None
    plain, plain_clock = _world()
    _succeeded(plain, plain_clock, "ok")
    assert plain.next_due() is None


def test_a_reversal_by_hand_first_leaves_the_scheduled_one_with_nothing_to_do():
    """Reversing by hand before the fault's time means the fault reverses nothing twice."""
    world, clock = _world(Faults(reverse_after_success=1.0, reverse_after_seconds=5.0))
    _succeeded(world, clock, "both")
    world.reverse("both", "by hand", webhook=False)
    balance = world.balance
    assert world.complete_due(clock.now + 5.0) == []
    assert world.balance == balance
    assert world.transaction("both")["failure_reason"] == "by hand"


def test_reversal_webhooks_are_dropped_about_half_the_time_and_reproducibly():
    """Over 200 reversals, between 30 % and 70 % of the webhooks are marked dropped, and the
    same seed drops the same ones."""

    def dropped_set() -> set[str]:
        world, clock = _world(Faults(reverse_after_success=1.0, reverse_after_seconds=1.0))
        for n in range(200):
            world.initiate_transfer(
                amount=100, bank_code=GOOD[0], account_number=GOOD[1], reference=f"h{n}"
            )
        clock.now += 1.0
        world.complete_due(clock.now)
        clock.now += 1.0
        events = world.complete_due(clock.now)
        assert len(events) == 200
        return {e.merchant_reference for e in events if "webhook_drop" in e.faults}

    first = dropped_set()
    assert 60 <= len(first) <= 140
    assert dropped_set() == first


def test_reversal_and_statement_fault_keys_parse_and_validate():
    """The new keys parse from --faults, and out-of-range values are refused."""
    faults = parse_faults(
        "reverse_after_success=0.5,reverse_after_seconds=2,statement_drop_line=3,"
        "statement_unknown_debit=0.1,statement_fee_drift=1"
    )
    assert (faults.reverse_after_success, faults.reverse_after_seconds) == (0.5, 2.0)
    assert faults.statement_drop_line == 3
    assert (faults.statement_unknown_debit, faults.statement_fee_drift) == (0.1, 1.0)
    for bad in (
        "reverse_after_success=2",
        "reverse_after_seconds=-1",
        "statement_drop_line=-1",
        "statement_drop_line=1.5",
        "statement_fee_drift=1.1",
    ):
        with pytest.raises(ConfigError):
            parse_faults(bad)
