"""What one provider lookup answered, and what the pure cores read in it alike (no I/O).

Every subject looked up at the provider (transfers, collections) gets one of four answers
(`LookupAnswer`). An answer with figures (`Found`) is each core's own business; the other
three say the same thing whatever was looked up, so one reader (`read_without_figures`) turns
them into the not-found count, the findings they open or settle, and the next check's delay.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from ledger.types import FindingKind, TransferStatus


@dataclass(frozen=True)
class Found:
    """The provider returned the transaction."""

    reference: str
    merchant_reference: str | None
    amount: int
    fee: int | None
    status: TransferStatus
    failure_reason: str | None = None
    completed_at: dt.datetime | None = None  # read for collections (paid_after_expiry)


@dataclass(frozen=True)
class NotFound:
    """The provider answered 404 "Transaction not found"."""


@dataclass(frozen=True)
class Uninterpretable:
    """The provider's answer could not be interpreted."""

    detail: str


@dataclass(frozen=True)
class Transient:
    """A 5xx, timeout or 429: try again later; never a finding."""

    detail: str
    retry_after: float | None = None


LookupAnswer = Found | NotFound | Uninterpretable | Transient


def backoff_delay(attempt: int, base: int, cap: int) -> float:
    """Seconds before re-check number `attempt` (1-based): base doubling per attempt, capped."""
    if attempt < 1 or base <= 0:
        return 0.0
    # Cap the exponent first so huge attempt counts never build huge integers.
    exponent = min(attempt - 1, 62)
    return float(min(base * (2**exponent), cap))


def answered_for_another(reference: str, provider_reference: str | None, answer: Found) -> bool:
    """True when the provider answered for a subject that is not the one (`reference`,
    `provider_reference`) looked up."""
    if answer.merchant_reference in (None, reference):
        return False
    # An orphan may be keyed by the provider's reference: a matching one is ours too.
    return answer.reference not in (reference, provider_reference)


@dataclass(frozen=True)
class NoFigures:
    """What an answer without figures says: the provider's last known figures stand."""

    not_found: int  # consecutive "not found" answers, this one included
    next_check_in: float
    provider_error: bool  # anything but a clean "not found"
    open: dict[FindingKind, str] = field(default_factory=dict)
    resolved: frozenset[FindingKind] = frozenset()


def read_without_figures(
    answer: NotFound | Uninterpretable | Transient,
    *,
    not_found_count: int,
    not_found_limit: int,
    delay: float,
) -> NoFigures:
    """Read a not-found, uninterpretable or transient answer (docs/rules.md: unknown_to_provider
    after PAYRECON_NOT_FOUND_LIMIT "not found" answers in a row; unverifiable when the answer
    cannot be read; a 429's Retry-After wins over the backoff `delay` when longer)."""
    if isinstance(answer, NotFound):
        not_found = not_found_count + 1
        open_ = {}
        if not_found >= not_found_limit:
            open_[FindingKind.UNKNOWN_TO_PROVIDER] = (
                f"the provider answered 'not found' {not_found} times in a row"
            )
        return NoFigures(
            not_found,
            delay,
            provider_error=False,
            open=open_,
            resolved=frozenset({FindingKind.UNVERIFIABLE}),
        )
    if isinstance(answer, Uninterpretable):
        return NoFigures(
            not_found_count,
            delay,
            provider_error=True,
            open={FindingKind.UNVERIFIABLE: answer.detail},
        )
    if answer.retry_after is not None:
        delay = max(delay, answer.retry_after)
    return NoFigures(not_found_count, delay, provider_error=True)
