"""Contract fee tiers (`PAYRECON_FEE_SCHEDULE`): parsing and lookup, pure."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ledger.errors import NumberInputError
from ledger.money import kobo_from_text


@dataclass(frozen=True)
class FeeTier:
    """Transfers of `low`..`high` kobo (inclusive; `high` None = no upper bound) cost `fee`."""

    low: int
    high: int | None
    fee: int

    def covers(self, amount: int) -> bool:
        """True when `amount` falls inside this tier."""
        return self.low <= amount and (self.high is None or amount <= self.high)


@dataclass(frozen=True)
class FeeSchedule:
    """Ordered, non-overlapping fee tiers."""

    tiers: tuple[FeeTier, ...]

    def fee_for(self, amount: int) -> int | None:
        """The contract fee for `amount`, or None when no tier covers it."""
        for tier in self.tiers:
            if tier.covers(amount):
                return tier.fee
        return None

    def __str__(self) -> str:
        return ",".join(f"{t.low}-{'' if t.high is None else t.high}:{t.fee}" for t in self.tiers)


def _kobo(text: str, what: str) -> int:
    try:
        return kobo_from_text(text)
    except NumberInputError as exc:
        raise ValueError(f"{what} {text!r} {exc}") from None


def parse_fee_schedule(text: str) -> FeeSchedule:
    """Parse `0-500000:1000,500001-5000000:2500,5000001-:5000` into tiers; ValueError if bad."""
    tiers: list[FeeTier] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        span, sep, fee_text = part.partition(":")
        low_text, dash, high_text = span.partition("-")
        if not sep or not dash:
            raise ValueError(f"tier {part!r} is not LOW-HIGH:FEE")
        low = _kobo(low_text.strip(), "lower bound")
        high = _kobo(high_text.strip(), "upper bound") if high_text.strip() else None
        fee = _kobo(fee_text.strip(), "fee")
        if high is not None and high < low:
            raise ValueError(f"tier {part!r} ends before it starts")
        tiers.append(FeeTier(low, high, fee))
    if not tiers:
        raise ValueError("no tiers given")
    tiers.sort(key=lambda t: t.low)
    for before, after in itertools.pairwise(tiers):
        if before.high is None or before.high >= after.low:
            raise ValueError(f"tiers starting at {before.low} and {after.low} overlap")
    return FeeSchedule(tuple(tiers))
