"""What an alert says: naira rendering and one title/body per finding kind, pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ledger.types import FindingKind

_KOBO = re.compile(r"(-?\d+) kobo")

WHAT_TO_DO: dict[str, str] = {
    FindingKind.AMOUNT_MISMATCH: (
        "Compare the provider dashboard with the ledger; if the provider moved a different "
        "amount, raise it with the provider's support and correct the books."
    ),
    FindingKind.FEE_MISMATCH: (
        "Check the fee against the contract and the initiation quote; claim the difference "
        "from the provider if it overcharged."
    ),
    FindingKind.STATUS_CONFLICT: (
        "The provider's record wins; confirm with the beneficiary whether money arrived "
        "before telling the customer anything."
    ),
    FindingKind.CONFLICTING_DELIVERY: (
        "Two deliveries of the same event disagree; the first is applied. Ask the provider "
        "which is right."
    ),
    FindingKind.ORPHAN_EVENT: (
        "A webhook named a transfer the ledger never initiated or expected: register it with "
        "`payrecon transfer expect` if it is ours, else investigate the key's use."
    ),
    FindingKind.STALE_PENDING: (
        "The transfer is still pending at the provider; contact the provider's support with "
        "both references. Do not send it again."
    ),
    FindingKind.UNKNOWN_TO_PROVIDER: (
        "The provider does not know this transfer. If it was never sent (initiation 'intent'), "
        "no money moved: pay again with a new reference; otherwise ask the provider."
    ),
    FindingKind.UNVERIFIABLE: (
        "The provider's answer could not be read; it is checked again automatically. If it "
        "persists, look the transfer up in the provider dashboard."
    ),
}


def naira(kobo: int | None) -> str:
    """₦1,234.56 from 123456 kobo (integer arithmetic, never floats); '—' for None."""
    if kobo is None:
        return "—"
    sign = "-" if kobo < 0 else ""
    whole, part = divmod(abs(kobo), 100)
    return f"{sign}₦{whole:,}.{part:02d}"


def kobo_to_naira_text(text: str) -> str:
    """Rewrite every 'N kobo' in a finding detail as naira."""
    return _KOBO.sub(lambda m: naira(int(m.group(1))), text)


@dataclass(frozen=True)
class TransferFacts:
    """The transfer's figures an alert shows."""

    reference: str
    provider_reference: str | None
    status: str
    confirmed: bool
    amount: int | None
    fee: int | None
    provider_amount: int | None
    provider_fee: int | None
    webhook_amount: int | None
    webhook_fee: int | None


def finding_alert(
    kind: str, detail: str, facts: TransferFacts, *, step: int = 0, age_seconds: float = 0.0
) -> tuple[str, str]:
    """The (title, body) of the alert for one finding (step > 0: a stale escalation)."""
    escalation = f" (escalation {step}, pending {_duration(age_seconds)})" if step > 1 else ""
    title = f"payrecon: {kind} on transfer {facts.reference}{escalation}"
    lines = [
        f"What happened: {kind.replace('_', ' ')} — {kobo_to_naira_text(detail)}.",
        f"Transfer: {facts.reference} (provider reference "
        f"{facts.provider_reference or 'not known yet'}), status {facts.status}"
        f"{' (confirmed by the provider)' if facts.confirmed else ' (not confirmed)'}.",
        f"Amount: expected {naira(facts.amount)}, provider {naira(facts.provider_amount)}, "
        f"webhook {naira(facts.webhook_amount)}.",
        f"Fee: quoted {naira(facts.fee)}, provider {naira(facts.provider_fee)}, "
        f"webhook {naira(facts.webhook_fee)}.",
        f"What to do: {WHAT_TO_DO.get(kind, 'Investigate the transfer.')}",
    ]
    return title, "\n".join(lines)


def key_refused_alert() -> tuple[str, str]:
    """The (title, body) of the alert sent when the provider refuses our secret key."""
    return (
        "payrecon: the provider refused the secret key",
        "What happened: the provider answered 401 Unauthenticated to a transaction lookup, so "
        "reconciliation stopped.\nWhat to do: check PAYRECON_PROVIDER_SECRET_KEY (expired, "
        "regenerated, or a key of the other environment) and restart the reconciler.",
    )


def job_failed_alert(error: str) -> tuple[str, str]:
    """The (title, body) of the alert sent when a scheduled pass fails."""
    return (
        "payrecon: a reconcile pass failed",
        f"What happened: {error}\nWhat to do: check the database and provider settings; the "
        "reconciler keeps trying every poll interval.",
    )


def _duration(seconds: float) -> str:
    hours, rest = divmod(int(seconds), 3600)
    return f"{hours} h {rest // 60} min" if hours else f"{rest // 60} min"
