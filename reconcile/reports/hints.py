"""What finance should do about each kind of finding (the report's "what to do" column)."""

from __future__ import annotations

HINTS: dict[str, str] = {
    "amount_mismatch": (
        "The provider moved a different amount than the ledger expected: compare the "
        "provider's record with the payout request and raise it with the provider."
    ),
    "fee_mismatch": (
        "The fee charged differs from the quote or the contract: claim the difference "
        "from the provider or correct the fee schedule."
    ),
    "status_conflict": (
        "Webhook and provider disagree on the outcome: trust the provider's API record; "
        "check the beneficiary was (or was not) credited before retrying."
    ),
    "conflicting_delivery": (
        "The same event arrived with different content: keep the first, ask the provider "
        "which copy is right."
    ),
    "orphan_event": (
        "A webhook for a payout the ledger never made or expected: find who initiated it "
        "(`payrecon transfer expect` if legitimate), otherwise treat as suspicious."
    ),
    "stale_pending": (
        "Still pending past the limit: do not pay again; query the provider and escalate "
        "if it stays pending."
    ),
    "unknown_to_provider": (
        "The provider has no such transaction: check the payout was really initiated; "
        "safe to retry only once the provider confirms it never received it."
    ),
    "unverifiable": (
        "The provider's answer could not be read: look the transfer up by hand "
        "(`payrecon provider transaction REF`)."
    ),
}

STALE_PENDING_HINT = HINTS["stale_pending"]


def hint_for(kind: str) -> str:
    """The advice for a finding kind; a generic line for kinds this version does not know."""
    return HINTS.get(kind, "Look the transfer up with the provider and compare with the ledger.")
