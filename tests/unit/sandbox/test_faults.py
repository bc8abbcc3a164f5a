"""Fault spec parsing and the deterministic per-transfer decisions."""

from __future__ import annotations

import pytest

from sandbox.errors import ConfigError
from sandbox.faults import Dice, Faults, decide_transfer_faults, faults_from_mapping, parse_faults


def test_parse_the_documented_example():
    """The README example parses into the expected fault set."""
    faults = parse_faults(
        "seed=7,webhook_drop=0.1,webhook_duplicate=0.1,webhook_delay=0.2,"
        "webhook_delay_seconds=2,tamper_fee=0.02,stuck_pending=0.01"
    )
    assert faults == Faults(
        seed=7,
        webhook_drop=0.1,
        webhook_duplicate=0.1,
        webhook_delay=0.2,
        webhook_delay_seconds=2.0,
        tamper_fee=0.02,
        stuck_pending=0.01,
    )


def test_empty_spec_is_no_faults():
    """An empty or blank spec means no faults."""
    assert parse_faults("") == Faults()
    assert parse_faults(" , ") == Faults()


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("webhook_explode=1", "webhook_explode"),
        ("webhook_drop=1.5", "webhook_drop"),
        ("webhook_drop=-0.1", "webhook_drop"),
        ("webhook_drop=abc", "webhook_drop"),
        ("webhook_drop", "webhook_drop"),
        ("webhook_drop=0.1,webhook_drop=0.2", "webhook_drop"),
        ("enquiry_rate_limit=1.5", "enquiry_rate_limit"),
        ("lookup_latency=inf", "lookup_latency"),
        ("seed=1.5", "seed"),
    ],
)
def test_bad_spec_names_the_key(spec, field):
    """An unknown key or a bad value raises ConfigError naming the key."""
    with pytest.raises(ConfigError) as caught:
        parse_faults(spec)
    assert caught.value.field == field


def test_mapping_rejects_booleans_and_strings():
    """JSON booleans and strings are not numbers for fault values."""
    with pytest.raises(ConfigError):
        faults_from_mapping({"webhook_drop": True})
    with pytest.raises(ConfigError):
        faults_from_mapping({"webhook_drop": "0.1"})


def test_decisions_are_deterministic_per_seed_and_reference():
    """The same seed and reference always give the same faults; probability 0 gives none."""
    faults = Faults(webhook_drop=0.5, tamper_fee=0.5, stuck_pending=0.5)
    first = [decide_transfer_faults(faults, 7, f"ref-{i}") for i in range(50)]
    again = [decide_transfer_faults(faults, 7, f"ref-{i}") for i in range(50)]
    other_seed = [decide_transfer_faults(faults, 8, f"ref-{i}") for i in range(50)]
    assert first == again
    assert first != other_seed
    assert all(not decide_transfer_faults(Faults(), 7, f"ref-{i}") for i in range(50))


def test_certain_faults_always_hit():
    """Probability 1 hits every transfer."""
    faults = Faults(fee_drift=1.0, webhook_duplicate=1.0)
    assert decide_transfer_faults(faults, 1, "x") == {"fee_drift", "webhook_duplicate"}


def test_dice_is_seeded():
    """Two dice with the same seed roll the same sequence."""
    a, b = Dice(3), Dice(3)
    assert [a.roll(0.5) for _ in range(40)] == [b.roll(0.5) for _ in range(40)]
    assert Dice(3).roll(0.0) is False
