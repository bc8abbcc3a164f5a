"""The sandbox's own fee schedule (the spec shows none); all values are kobo."""

from __future__ import annotations

# (upper bound inclusive, fee) — amounts above the last bound pay TRANSFER_FEE_TOP.
TRANSFER_FEE_TIERS: tuple[tuple[int, int], ...] = ((500_000, 1_000), (5_000_000, 2_500))
TRANSFER_FEE_TOP = 5_000
# The same schedule in PAYRECON_FEE_SCHEDULE syntax, for documentation and tests.
TRANSFER_FEE_SCHEDULE = "0-500000:1000,500001-5000000:2500,5000001-:5000"

COLLECTION_FEE_PERCENT = 1
COLLECTION_FEE_CAP = 200_000  # ₦2,000


def transfer_fee(amount: int) -> int:
    """Fee charged for a transfer of `amount` kobo (flat, by tier)."""
    for upper, fee in TRANSFER_FEE_TIERS:
        if amount <= upper:
            return fee
    return TRANSFER_FEE_TOP


def collection_fee(amount: int) -> int:
    """Fee kept from a collection of `amount` kobo: 1 % rounded down, capped at ₦2,000."""
    return min(amount * COLLECTION_FEE_PERCENT // 100, COLLECTION_FEE_CAP)
