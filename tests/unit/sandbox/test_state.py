"""The world's transitions, driven by a fake clock (no HTTP, no asyncio)."""

from __future__ import annotations

import pytest

from sandbox.config import SandboxConfig
from sandbox.errors import ConflictError, NotFoundError, RefusalError
from sandbox.faults import FEE_DRIFT_DELTA, Faults
from sandbox.models import EventType, Status
from sandbox.state import World

GOOD = ("044", "0440000017")
DORMANT = ("058", "0589999929")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def _world(**overrides) -> tuple[World, Clock]:
    clock = Clock()
    options = {"webhook_url": "http://127.0.0.1:9/hook", "seed": 5, "complete_after": 1.0}
    options.update(overrides)
    return World(SandboxConfig(**options), clock=clock), clock


def _initiate(world, reference, amount=100_000, account=GOOD):
    return world.initiate_transfer(
        amount=amount, bank_code=account[0], account_number=account[1], reference=reference
    )


def test_initiation_debits_amount_plus_fee_and_is_pending():
    """A transfer starts pending, quoting the fee, with amount + fee debited."""
    world, _ = _world(wallet_balance=1_000_000)
    transfer = _initiate(world, "a")
    assert transfer.status is Status.PENDING
    assert (transfer.fee_quoted, world.balance) == (1_000, 1_000_000 - 101_000)


def test_completion_happens_when_due_and_not_before():
    """Nothing completes before complete_after; at that moment the success event is made."""
    world, clock = _world()
    transfer = _initiate(world, "a")
    assert world.complete_due(clock.now + 0.5) == []
    clock.now += 1.0
    events = world.complete_due(clock.now)
    assert [e.event for e in events] == [EventType.TRANSFER_SUCCESS]
    assert set(events[0].data) == {"reference", "merchant_reference", "amount", "status", "fee"}
    assert transfer.status is Status.SUCCESSFUL
    assert world.next_due() is None


def test_failure_refunds_amount_keeps_fee_and_event_has_reason_only():
    """A failing account refunds the amount, keeps the fee; the event has no amount or fee."""
    world, clock = _world(wallet_balance=1_000_000)
    _initiate(world, "d", account=DORMANT)
    (event,) = world.complete_due(clock.now + 1.0)
    assert event.event is EventType.TRANSFER_FAILED
    assert set(event.data) == {"reference", "merchant_reference", "status", "failure_reason"}
    assert world.balance == 1_000_000 - 1_000


def test_refusals_move_nothing():
    """Each refusal leaves the wallet and the transfer list unchanged."""
    world, _ = _world(wallet_balance=50_000)
    for reference, account, amount, cause in [
        ("r1", ("999", "0440000017"), 10, "Invalid bank code"),
        ("r2", ("044", "0440000018"), 10, "Account not found"),
        ("r3", GOOD, 49_500, "Insufficient funds"),
    ]:
        with pytest.raises(RefusalError) as caught:
            _initiate(world, reference, amount=amount, account=account)
        assert caught.value.body["message"] == cause
    assert world.balance == 50_000
    assert world.transfers() == []


def test_force_complete_then_conflict_and_not_found():
    """Forcing completes a pending transfer once; again is 409; unknown is 404."""
    world, _ = _world(complete_after=None)
    transfer = _initiate(world, "f")
    event = world.force_complete(transfer.reference, Status.FAILED, None)
    assert event.data["failure_reason"] == "Transfer failed"
    with pytest.raises(ConflictError):
        world.force_complete("f", Status.SUCCESSFUL, None)
    with pytest.raises(NotFoundError):
        world.force_complete("missing", Status.SUCCESSFUL, None)


def test_fee_drift_changes_charged_fee_and_wallet():
    """Fee drift raises the charged fee above the quote and debits the difference."""
    world, clock = _world(wallet_balance=1_000_000, faults=Faults(fee_drift=1.0))
    transfer = _initiate(world, "drift")
    world.complete_due(clock.now + 1.0)
    assert transfer.fee_charged == transfer.fee_quoted + FEE_DRIFT_DELTA
    assert world.transaction("drift")["fee"] == transfer.fee_charged
    assert world.balance == 1_000_000 - 100_000 - transfer.fee_charged


def test_tamper_faults_do_not_apply_to_failed_transfers():
    """A failed transfer never records tamper faults (its webhook carries no figures)."""
    world, clock = _world(faults=Faults(tamper_amount=1.0, tamper_fee=1.0))
    _initiate(world, "d", account=DORMANT)
    world.complete_due(clock.now + 1.0)
    assert world.transfers()[0]["faults"] == []


def test_many_pending_transfers_complete_in_one_pass():
    """Ten thousand pending transfers all complete from the one schedule."""
    world, clock = _world(wallet_balance=10**12)
    for i in range(10_000):
        _initiate(world, f"bulk-{i}", amount=100)
    events = world.complete_due(clock.now + 1.0)
    assert len(events) == 10_000
    assert {t["status"] for t in world.transfers()} == {"successful"}


def test_collection_lifecycle_and_shared_reference_space():
    """A collection is pending, then paid; its reference cannot be reused by a transfer."""
    world, _ = _world(wallet_balance=0)
    collection = world.create_collection(reference="c", amount=10_000, customer={}, meta={})
    assert world.collection_transaction("c")["status"] == "pending"
    with pytest.raises(RefusalError):
        _initiate(world, "c")
    world.pay_collection(collection.reference, 12_000)
    view = world.transaction("c")
    assert (view["status"], view["amount"], view["fee"]) == ("successful", 12_000, 120)
    assert world.balance == 12_000 - 120


def test_collection_expiry_is_applied_on_lookup():
    """Past its expiry, a pending collection reads as failed (Collection expired)."""
    world, clock = _world(collection_ttl=60.0)
    world.create_collection(reference="c", amount=10_000, customer={}, meta={})
    clock.now += 61
    view = world.collection_transaction("c")
    assert (view["status"], view["failure_reason"]) == ("failed", "Collection expired")
    with pytest.raises(ConflictError):
        world.pay_collection("c", 10_000)


def test_lookup_by_either_reference_and_unknown():
    """Transactions are found by provider or merchant reference; unknown is 404."""
    world, _ = _world()
    transfer = _initiate(world, "m")
    assert world.transaction("m") == world.transaction(transfer.reference)
    with pytest.raises(NotFoundError):
        world.transaction("nope")
