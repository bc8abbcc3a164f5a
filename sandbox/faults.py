"""Fault injection: the fault set, its parser, and the seeded dice that apply it.

One vocabulary serves `--faults "k=v,k=v"` and the JSON body of
`POST /_sandbox/faults`. Which faults hit a transfer is decided once, at
initiation, from a Random seeded with (seed, merchant reference), so the same
seed and the same references give the same faults in every run.
"""

from __future__ import annotations

import dataclasses
import math
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.errors import ConfigError


@dataclass(frozen=True)
class Faults:
    """The active fault set; probabilities are 0..1, durations are seconds."""

    seed: int | None = None  # None: the sandbox's own seed
    webhook_drop: float = 0.0
    webhook_duplicate: float = 0.0
    webhook_delay: float = 0.0
    webhook_delay_seconds: float = 2.0
    webhook_reorder: float = 0.0
    tamper_amount: float = 0.0
    tamper_fee: float = 0.0
    fee_drift: float = 0.0
    stuck_pending: float = 0.0
    fail_rate: float = 0.0
    lookup_5xx: float = 0.0
    lookup_timeout: float = 0.0
    lookup_timeout_seconds: float = 30.0
    lookup_429: float = 0.0
    lookup_retry_after: int = 1
    lookup_latency: float = 0.0
    enquiry_slow: float = 0.0
    enquiry_unavailable: float = 0.0
    enquiry_rate_limit: int = 0
    collection_late: float = 0.0
    lookup_garbage: float = 0.0
    collection_late_seconds: float = 60.0
    reverse_after_success: float = 0.0
    reverse_after_seconds: float = 5.0
    statement_drop_line: int = 0
    statement_unknown_debit: float = 0.0
    statement_fee_drift: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Every key with its value, as the control route shows it."""
        return dataclasses.asdict(self)


_PROBABILITIES = frozenset(
    {
        "webhook_drop",
        "webhook_duplicate",
        "webhook_delay",
        "webhook_reorder",
        "tamper_amount",
        "tamper_fee",
        "fee_drift",
        "stuck_pending",
        "fail_rate",
        "lookup_5xx",
        "lookup_timeout",
        "lookup_429",
        "enquiry_unavailable",
        "collection_late",
        "lookup_garbage",
        "reverse_after_success",
        "statement_unknown_debit",
        "statement_fee_drift",
    }
)
_SECONDS = frozenset(
    {
        "webhook_delay_seconds",
        "lookup_timeout_seconds",
        "lookup_latency",
        "enquiry_slow",
        "collection_late_seconds",
        "reverse_after_seconds",
    }
)
_COUNTS = frozenset({"lookup_retry_after", "enquiry_rate_limit", "statement_drop_line"})
_MAX_SECONDS = 3600.0

# Per-transfer decisions, drawn in this fixed order so that a run is reproducible.
TRANSFER_FAULTS: tuple[str, ...] = (
    "stuck_pending",
    "fail_rate",
    "fee_drift",
    "tamper_amount",
    "tamper_fee",
    "webhook_drop",
    "webhook_duplicate",
    "webhook_delay",
    "webhook_reorder",
)
# Per-collection decisions, drawn at payment in this fixed order (reproducible, like transfers).
COLLECTION_FAULTS: tuple[str, ...] = ("collection_late", "fee_drift")
# Decided at creation: `stuck_pending` keeps an unpaid collection pending past its expiry.
COLLECTION_CREATE_FAULTS: tuple[str, ...] = ("stuck_pending",)
# How far a tampered or drifted figure moves, in kobo.
TAMPER_AMOUNT_DELTA = 100
TAMPER_FEE_DELTA = 50
FEE_DRIFT_DELTA = 500
FAIL_RATE_REASON = "Transfer declined by beneficiary bank"
# Per-transfer statement faults, drawn at initiation from their own stream (so adding them
# changed none of the draws above).
STATEMENT_FAULTS: tuple[str, ...] = ("statement_fee_drift", "statement_unknown_debit")
# How far a statement's fee line moves from the fee the lookup answers, in kobo (₦5).
STATEMENT_FEE_DRIFT_DELTA = 500
# Drawn when a transfer succeeds: is it reversed later, and is that webhook then dropped?
REVERSAL_FAULTS: tuple[str, ...] = ("reverse_after_success",)
REVERSAL_WEBHOOK_DROP = 0.5
REVERSAL_REASON = "Transfer reversed by beneficiary bank"


def fault_keys() -> tuple[str, ...]:
    """All accepted keys, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(Faults))


def _coerce(key: str, value: object) -> int | float | None:
    if key not in fault_keys():
        raise ConfigError(f"unknown fault key {key!r}", field=key)
    if key == "seed":
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError("seed must be an integer", field=key)
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{key} must be a number", field=key)
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{key} must be finite", field=key)
    if key in _PROBABILITIES:
        if not 0 <= value <= 1:
            raise ConfigError(f"{key} must be a probability between 0 and 1", field=key)
        return float(value)
    if key in _SECONDS:
        if not 0 <= value <= _MAX_SECONDS:
            raise ConfigError(f"{key} must be between 0 and {_MAX_SECONDS:g} seconds", field=key)
        return float(value)
    assert key in _COUNTS
    if not isinstance(value, int) or value < 0:
        raise ConfigError(f"{key} must be a whole number >= 0", field=key)
    return value


def faults_from_mapping(values: Mapping[str, object]) -> Faults:
    """Build a fault set from JSON-like values; unknown keys or bad values raise ConfigError."""
    coerced = {key: _coerce(key, value) for key, value in values.items()}
    return Faults(**coerced)  # type: ignore[arg-type]


def _parse_scalar(key: str, text: str) -> object:
    if key == "seed" and text.lower() in {"none", "null"}:
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"{key} has a value that is not a number: {text!r}", field=key) from None


def parse_faults(spec: str) -> Faults:
    """Parse the `--faults` string, e.g. `seed=7,webhook_drop=0.1,enquiry_slow=2`."""
    values: dict[str, object] = {}
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        key, sep, text = part.partition("=")
        key = key.strip()
        if not sep:
            raise ConfigError(f"fault {part!r} is not key=value", field=key or "faults")
        if key in values:
            raise ConfigError(f"fault key {key!r} given twice", field=key)
        if key not in fault_keys():
            raise ConfigError(f"unknown fault key {key!r}", field=key)
        values[key] = _parse_scalar(key, text.strip())
    return faults_from_mapping(values)


def decide_transfer_faults(
    faults: Faults, seed: int, merchant_reference: str, keys: tuple[str, ...] = TRANSFER_FAULTS
) -> frozenset[str]:
    """The faults of `keys` that hit the transfer (or collection) with this merchant reference
    (deterministic)."""
    rng = random.Random(f"{seed}:{merchant_reference}")
    chosen: set[str] = set()
    for key in keys:
        draw = rng.random()  # always drawn, so one key's probability never shifts another's
        probability = getattr(faults, key)
        if draw < probability:
            chosen.add(key)
    return frozenset(chosen)


class Dice:
    """A seeded, lock-protected Random for per-request faults (lookups, enquiries)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def roll(self, probability: float) -> bool:
        """True with the given probability; a zero probability draws nothing."""
        if probability <= 0:
            return False
        with self._lock:
            return self._rng.random() < probability


def decide_reversal(faults: Faults, seed: int, merchant_reference: str) -> tuple[bool, bool]:
    """(reversed later, its webhook dropped) for a transfer that just succeeded.

    Drawn from the transfer's own streams, so a run with the same seed and references
    reverses the same transfers and drops the same webhooks.
    """
    hit = decide_transfer_faults(faults, seed, f"{merchant_reference}#reverse", REVERSAL_FAULTS)
    dropped = random.Random(f"{seed}:{merchant_reference}#reverse-webhook").random()
    return bool(hit), dropped < REVERSAL_WEBHOOK_DROP


def outside_payout_amount(seed: int, merchant_reference: str) -> int:
    """The amount (kobo, whole naira from ₦1,000 to ₦50,000) of the payout someone made outside
    payrecon beside the transfer with this merchant reference (`statement_unknown_debit`)."""
    rng = random.Random(f"{seed}:{merchant_reference}#outside")
    return rng.randint(1_000, 50_000) * 100
