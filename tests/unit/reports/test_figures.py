"""The one figure rule (ledger.figures) in Python, and the amount at stake of a finding."""

from __future__ import annotations

from dataclasses import dataclass

from ledger.figures import (
    amount_at_stake,
    collection_amount,
    collection_fee,
    transfer_amount,
    transfer_fee,
)


@dataclass
class _Transfer:
    amount: int | None = None
    fee: int | None = None
    webhook_amount: int | None = None
    webhook_fee: int | None = None
    provider_amount: int | None = None
    provider_fee: int | None = None


@dataclass
class _Collection:
    amount: int
    status: str = "pending"
    amount_paid: int | None = None
    fee: int | None = None
    provider_fee: int | None = None


def test_provider_figures_win_then_webhook_then_expected() -> None:
    """Each figure is the provider's when known, else the webhook's, else the expected one."""
    assert transfer_amount(_Transfer(100, 5, 200, 6, 300, 7)) == 300
    assert transfer_fee(_Transfer(100, 5, 200, 6, 300, 7)) == 7
    assert transfer_amount(_Transfer(100, 5, 200, 6)) == 200
    assert transfer_fee(_Transfer(100, 5, webhook_amount=200)) == 5
    assert transfer_amount(_Transfer()) == 0


def test_a_failed_collection_counts_only_a_fee_charged() -> None:
    """A failed collection's quote is no fee; a fee the provider charged still counts."""
    assert collection_fee(_Collection(1000, "failed", fee=50)) == 0
    assert collection_fee(_Collection(1000, "failed", fee=50, provider_fee=20)) == 20
    assert collection_fee(_Collection(1000, "pending", fee=50)) == 50
    assert collection_amount(_Collection(1000, amount_paid=900)) == 900
    assert collection_amount(_Collection(1000)) == 1000


def test_a_mismatch_puts_the_difference_at_stake() -> None:
    """Amount and fee mismatches and under/overpayments are worth their difference."""
    assert amount_at_stake("amount_mismatch", _Transfer(10_000, provider_amount=10_100)) == 100
    assert amount_at_stake("amount_mismatch", _Transfer(10_000, webhook_amount=9_000)) == 1_000
    assert amount_at_stake("fee_mismatch", _Transfer(10_000, 100, provider_fee=900)) == 800
    assert amount_at_stake("underpaid", _Collection(50_000, amount_paid=45_000)) == 5_000
    assert amount_at_stake("overpaid", _Collection(50_000, amount_paid=52_000)) == 2_000


def test_a_fee_over_the_schedule_puts_the_fee_charged_at_stake() -> None:
    """When every fee figure agrees (over the contract schedule) the fee itself is at stake."""
    assert amount_at_stake("fee_mismatch", _Transfer(10_000, 900, provider_fee=900)) == 900


def test_money_in_question_puts_the_amount_at_stake() -> None:
    """A status in doubt, an orphan or an unknown transfer is worth its counted amount."""
    assert amount_at_stake("status_conflict", _Transfer(10_000, provider_amount=9_000)) == 9_000
    assert amount_at_stake("orphan_event", _Transfer(webhook_amount=7_000)) == 7_000
    assert amount_at_stake("unknown_to_provider", _Collection(3_000)) == 3_000
