"""What to do about a finding: the one source of advice for alerts, reports and `findings list`.

Pure. For `amount_mismatch` and `fee_mismatch` the advice depends on *which* source differs,
read from the transfer's figures: blaming the provider when only the webhook disagreed would
send finance to claim money that was never overcharged. docs/operations.md ("What each finding
means and what to do") states the same cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ledger.types import FindingKind
from reconcile.checks import contract_fee_in

_SENDER_CHECKS = (
    "check who can reach your webhook URL (sender checks, docs/operations.md section 6)"
)
_LOOKUP = "`payrecon provider transaction REF`"

ADVICE: dict[str, str] = {
    FindingKind.AMOUNT_MISMATCH: (
        f"Compare the provider's record ({_LOOKUP}) with the ledger's expected amount."
    ),
    FindingKind.FEE_MISMATCH: (
        "Check the fee against the initiation quote and the contract (PAYRECON_FEE_SCHEDULE)."
    ),
    FindingKind.STATUS_CONFLICT: (
        "The provider's record wins; confirm with the beneficiary whether money arrived "
        "before telling the customer anything. Never pay again on the webhook's word."
    ),
    FindingKind.CONFLICTING_DELIVERY: (
        "Two deliveries of the same event disagree; the first is applied. Ask the provider "
        "which copy is right; repeated cases suggest tampering in transit."
    ),
    FindingKind.ORPHAN_EVENT: (
        "A webhook named a transfer the ledger never initiated or expected: register it with "
        "`payrecon transfer expect` if it is yours, else treat it as suspicious and rotate "
        "the provider key."
    ),
    FindingKind.STALE_PENDING: (
        "Still pending at the provider past the limit: do not pay again; contact the "
        "provider's support with both references."
    ),
    FindingKind.UNKNOWN_TO_PROVIDER: (
        "The provider does not know this transfer. If it was never sent (initiation "
        "'intent'), no money moved: pay again with a new reference; otherwise check the "
        "reference and PAYRECON_PROVIDER_BASE_URL, and ask the provider."
    ),
    FindingKind.UNVERIFIABLE: (
        f"The provider's answer could not be read; it is checked again automatically. If it "
        f"persists, look the transfer up by hand ({_LOOKUP})."
    ),
    FindingKind.UNDERPAID: (
        "The customer paid less than the collection asked for: do not deliver the order; "
        "ask the customer to pay the difference or refund what arrived "
        "(`payrecon collection show REF` shows both figures)."
    ),
    FindingKind.OVERPAID: (
        "The customer paid more than the collection asked for: the difference is owed back "
        "to the customer; refund it (`payrecon collection show REF` shows both figures)."
    ),
    FindingKind.REVERSED_AFTER_SUCCESS: (
        "The provider reversed a transfer it had confirmed successful: the money is back in "
        "the wallet and the beneficiary does not have it. Hold or recover the goods, or pay "
        "again with a new reference once the beneficiary's account is confirmed (docs/finance.md)."
    ),
    FindingKind.UNMATCHED_STATEMENT_LINE: (
        "Money moved on the statement that nothing in the ledger accounts for: match the line "
        "to its transfer or collection (`payrecon statement match LINE_ID --transfer REF`), or "
        "explain it (`payrecon statement ignore LINE_ID --as funding|charge|settlement|other "
        "--note TEXT`); a debit nobody made is a payout from outside payrecon: ask who has "
        "dashboard access (docs/statements.md)."
    ),
    FindingKind.STATEMENT_BALANCE_GAP: (
        "The statement's running balance jumps before this line: a line is missing from the "
        "export. Export the days around it again from the provider's dashboard and import the "
        "file; the finding resolves when the chain closes."
    ),
    FindingKind.MISSING_FROM_STATEMENT: (
        "The provider says this money moved but no line of the imported statement shows it: "
        "check the export covers the day, then look for the line by hand (`payrecon statement "
        "lines --state unmatched`) and match it, or ask the provider why the wallet shows "
        "nothing."
    ),
    FindingKind.STATEMENT_MISMATCH: (
        "The statement shows other figures than the ledger for this movement (both in the "
        "detail): a fee charged twice or drifted, a collection credited short. Claim the "
        "difference from the provider with the line and the transfer's references."
    ),
    FindingKind.CLOSED_PERIOD_CHANGED: (
        "Something changed inside a period finance had closed and locked: review the change "
        "(detail), then close and lock the period again (`payrecon period close ... --lock`) "
        "so its recorded tie-out is the true one; that resolves the finding."
    ),
    FindingKind.PAID_AFTER_EXPIRY: (
        "The payment arrived after the collection's account expired: if the order was "
        "already cancelled, refund the customer or honour the order; do not charge again."
    ),
}
GENERIC = "Look the transfer up with the provider and compare it with the ledger."


class HasFigures(Protocol):
    """Anything carrying a transfer's money fields (a `Transfer` row, alert facts, a SQL row)."""

    @property
    def amount(self) -> int | None: ...
    @property
    def fee(self) -> int | None: ...
    @property
    def webhook_amount(self) -> int | None: ...
    @property
    def webhook_fee(self) -> int | None: ...
    @property
    def provider_amount(self) -> int | None: ...
    @property
    def provider_fee(self) -> int | None: ...


@dataclass(frozen=True)
class Figures:
    """One transfer's money as each source gives it (kobo; None = that source has not said)."""

    amount: int | None = None  # expected by the ledger
    fee: int | None = None  # quoted at initiation
    webhook_amount: int | None = None
    webhook_fee: int | None = None
    provider_amount: int | None = None
    provider_fee: int | None = None
    contract_fee: int | None = None  # PAYRECON_FEE_SCHEDULE's fee, when the check applied one

    @classmethod
    def of(cls, source: HasFigures, detail: str = "") -> Figures:
        """The figures of a transfer, with the contract fee its finding's detail recorded."""
        return cls(
            amount=source.amount,
            fee=source.fee,
            webhook_amount=source.webhook_amount,
            webhook_fee=source.webhook_fee,
            provider_amount=source.provider_amount,
            provider_fee=source.provider_fee,
            contract_fee=contract_fee_in(detail),
        )


def what_to_do(kind: str, figures: Figures | None = None) -> str:
    """The advice for a finding of `kind` on a transfer with `figures` (None: the kind's own)."""
    if figures is not None and kind == FindingKind.AMOUNT_MISMATCH:
        return _amount_advice(figures) or ADVICE[kind]
    if figures is not None and kind == FindingKind.FEE_MISMATCH:
        return " ".join(_fee_advice(figures)) or ADVICE[kind]
    return ADVICE.get(kind, GENERIC)


def _amount_advice(f: Figures) -> str | None:
    expected, provider, webhook = f.amount, f.provider_amount, f.webhook_amount
    if expected is None:
        return None
    if provider is not None and provider != expected:
        also = (
            " The webhook's amount differs from the provider's too; the provider's record counts."
            if webhook is not None and webhook != provider
            else ""
        )
        return (
            "The provider moved a different amount than the ledger expected: compare its "
            f"record ({_LOOKUP}) with your payout request, raise it with the provider's support "
            "and correct the books." + also
        )
    if webhook is None or webhook == expected:
        return None
    if provider is None:
        return (
            "Only the webhook reports a different amount, and the provider has not confirmed "
            "the transfer yet (it is checked again automatically): do not act on the webhook's "
            "figure; if the provider's record shows it too, raise it with the provider."
        )
    return (
        "Only the webhook's amount differs: the provider moved the expected amount, so no "
        f"money is missing. The webhook was wrong or tampered with: {_SENDER_CHECKS}."
    )


def _fee_advice(f: Figures) -> list[str]:
    quoted, provider, webhook, contract = f.fee, f.provider_fee, f.webhook_fee, f.contract_fee
    advice = []
    if provider is not None and quoted is not None and provider > quoted:
        advice.append(
            "The provider charged more than it quoted at initiation: claim the difference "
            "from the provider."
        )
    if provider is not None and quoted is not None and provider < quoted:
        advice.append(
            "The provider charged less than it quoted: nothing to claim; book the provider's fee."
        )
    if provider is not None and webhook is not None and webhook != provider:
        advice.append(
            "The webhook's fee differs from the provider's record, which counts: the webhook "
            f"was wrong or tampered with; {_SENDER_CHECKS}."
            + (" Nothing to claim." if provider == quoted else "")
        )
    if provider is None and webhook is not None and quoted is not None and webhook != quoted:
        advice.append(
            "Only the webhook reports a different fee, and the provider has not confirmed it "
            "yet (it is checked again automatically): claim nothing on the webhook's word."
        )
    if contract is not None and provider is not None and provider > contract:
        advice.append(
            "The provider charged more than your contract (PAYRECON_FEE_SCHEDULE) allows: "
            "claim the difference from the provider, or correct PAYRECON_FEE_SCHEDULE if the "
            "contract changed."
        )
    if contract is not None and provider is None and webhook is not None and webhook > contract:
        advice.append(
            "The webhook's fee is above your contract (PAYRECON_FEE_SCHEDULE), but the provider "
            "has not confirmed a fee yet: wait for its record before claiming anything."
        )
    return advice
