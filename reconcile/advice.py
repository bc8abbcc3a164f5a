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
from reconcile.reports.naira import naira

# Two audiences (docs/rules.md Reports): finance reads pages and the HTML report, in plain
# language with amounts in naira; ops read the CLI, alerts and the JSON, which add the command
# or setting to use. `finance_advice` gives the first, `what_to_do` both.
_SENDER_CHECKS = "have your technical team check who can reach your webhook address"
_LOOKUP = "Look it up: `payrecon provider transaction REF`."

ADVICE: dict[str, str] = {
    FindingKind.AMOUNT_MISMATCH: (
        "The amount differs between the provider's record and the amount you expected: compare "
        "the provider's record with your payout request before booking anything."
    ),
    FindingKind.FEE_MISMATCH: (
        "The fee differs from the fee quoted when the payout was made or from your contract: "
        "check it against the quote and the contract before booking it."
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
        "The provider told us about a payout we never made or expected. If it is yours, have "
        "it registered; if not, treat it as suspicious and tell your technical team."
    ),
    FindingKind.STALE_PENDING: (
        "Still pending at the provider past the limit: do not pay again; contact the "
        "provider's support with both references."
    ),
    FindingKind.UNKNOWN_TO_PROVIDER: (
        "The provider has no record of this payout. If it was never sent, no money moved and "
        "it can be paid again with a new reference; otherwise ask the provider with the "
        "reference."
    ),
    FindingKind.UNVERIFIABLE: (
        "The provider's answer could not be read; it is checked again automatically. Nothing "
        "to do unless it stays open for a day: then ask your technical team to look it up."
    ),
    FindingKind.UNDERPAID: (
        "The customer paid less than the collection asked for: do not deliver the order; "
        "ask the customer to pay the difference or refund what arrived."
    ),
    FindingKind.OVERPAID: (
        "The customer paid more than the collection asked for: the difference is owed back "
        "to the customer; refund it."
    ),
    FindingKind.REVERSED_AFTER_SUCCESS: (
        "The provider reversed a transfer it had confirmed successful: the money is back in "
        "the wallet and the beneficiary does not have it. Hold or recover the goods, or pay "
        "again with a new reference once the beneficiary's account is confirmed."
    ),
    FindingKind.UNMATCHED_STATEMENT_LINE: (
        "Money moved on the statement that nothing in the ledger accounts for: match the line "
        "to its transfer or collection on the Statements page, or ignore it as a funding, "
        "charge, settlement or other with the reason; a debit nobody made is a payout from "
        "outside payrecon: ask who has dashboard access."
    ),
    FindingKind.STATEMENT_BALANCE_GAP: (
        "The statement's running balance jumps before this line: a line is missing from the "
        "export. Export the days around it again from the provider's dashboard and import the "
        "file; the finding resolves when the chain closes."
    ),
    FindingKind.MISSING_FROM_STATEMENT: (
        "The provider says this money moved but no line of the imported statement shows it: "
        "check the export covers the day, then look for the line among the unmatched lines on "
        "the Statements page and match it, or ask the provider why the wallet shows nothing."
    ),
    FindingKind.STATEMENT_MISMATCH: (
        "The statement shows other figures than the ledger for this movement (both in the "
        "detail): a fee charged twice or drifted, a collection credited short. Claim the "
        "difference from the provider with the line and the transfer's references."
    ),
    FindingKind.CLOSED_PERIOD_CHANGED: (
        "Something changed inside a period finance had closed and locked: review the change "
        "(detail), then close and lock the period again (Periods page, Close and lock) so its "
        "recorded tie-out is the true one; that resolves the finding."
    ),
    FindingKind.PAID_AFTER_EXPIRY: (
        "The payment arrived after the collection's account expired: if the order was "
        "already cancelled, refund the customer or honour the order; do not charge again."
    ),
}
# What ops add (the CLI, alerts, the JSON): the command or setting for the job.
OPS_HINTS: dict[str, str] = {
    FindingKind.AMOUNT_MISMATCH: _LOOKUP,
    FindingKind.FEE_MISMATCH: "Contract fees are PAYRECON_FEE_SCHEDULE.",
    FindingKind.ORPHAN_EVENT: (
        "Register it with `payrecon transfer expect`; if it is not yours, rotate the provider key."
    ),
    FindingKind.UNKNOWN_TO_PROVIDER: (
        "A transfer never sent shows initiation 'intent'; check the reference and "
        "PAYRECON_PROVIDER_BASE_URL."
    ),
    FindingKind.UNVERIFIABLE: _LOOKUP,
    FindingKind.UNDERPAID: "`payrecon collection show REF` shows both figures.",
    FindingKind.OVERPAID: "`payrecon collection show REF` shows both figures.",
    FindingKind.REVERSED_AFTER_SUCCESS: "See docs/finance.md (reversals).",
    FindingKind.UNMATCHED_STATEMENT_LINE: (
        "`payrecon statement match LINE_ID --transfer REF` or `payrecon statement ignore "
        "LINE_ID --as funding|charge|settlement|other --note TEXT` (docs/statements.md)."
    ),
    FindingKind.MISSING_FROM_STATEMENT: "`payrecon statement lines --state unmatched`.",
    FindingKind.CLOSED_PERIOD_CHANGED: (
        "`payrecon period close --account A --since D --until D --lock`."
    ),
}
_SENDER_HINT = "Sender checks: docs/operations.md section 6."
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


def finance_advice(kind: str, figures: Figures | None = None) -> str:
    """The advice for finance (pages, the HTML report): what happened and what to do, in
    plain language, amounts in naira, no commands."""
    if figures is not None and kind == FindingKind.AMOUNT_MISMATCH:
        return _amount_advice(figures) or ADVICE[kind]
    if figures is not None and kind == FindingKind.FEE_MISMATCH:
        return " ".join(_fee_advice(figures)) or ADVICE[kind]
    return ADVICE.get(kind, GENERIC)


def what_to_do(kind: str, figures: Figures | None = None) -> str:
    """The advice for ops (CLI, alerts, JSON): finance's advice and the command or setting to
    use for it."""
    advice = finance_advice(kind, figures)
    hints = [OPS_HINTS[kind]] if kind in OPS_HINTS else []
    if _SENDER_CHECKS in advice:
        hints.append(_SENDER_HINT)
    return " ".join([advice, *hints])


def _amount_advice(f: Figures) -> str | None:
    expected, provider, webhook = f.amount, f.provider_amount, f.webhook_amount
    if expected is None:
        return None
    if provider is not None and provider != expected:
        also = (
            f" The webhook said {naira(webhook)}, which differs from the provider's too; the "
            "provider's record counts."
            if webhook is not None and webhook != provider
            else ""
        )
        return (
            f"The provider moved a different amount than the ledger expected: {naira(provider)} "
            f"instead of {naira(expected)} ({_difference(provider, expected)}). Compare its "
            "record with your payout request, raise it with the provider's support and correct "
            "the books." + also
        )
    if webhook is None or webhook == expected:
        return None
    if provider is None:
        return (
            f"Only the webhook reports a different amount ({naira(webhook)} instead of "
            f"{naira(expected)}), and the provider has not confirmed the transfer yet (it is "
            "checked again automatically): do not act on the webhook's figure; if the "
            "provider's record shows it too, raise it with the provider."
        )
    return (
        f"Only the webhook's amount differs ({naira(webhook)}): the provider moved the expected "
        f"{naira(expected)}, so no money is missing. The webhook was wrong or tampered with: "
        f"{_SENDER_CHECKS}."
    )


def _difference(got: int, wanted: int) -> str:
    gap = got - wanted
    return f"{naira(abs(gap))} {'more' if gap > 0 else 'less'}"


def _fee_advice(f: Figures) -> list[str]:
    quoted, provider, webhook, contract = f.fee, f.provider_fee, f.webhook_fee, f.contract_fee
    advice = []
    if provider is not None and quoted is not None and provider > quoted:
        advice.append(
            f"The provider charged more than it quoted at initiation ({naira(provider)} against "
            f"{naira(quoted)}): claim the difference from the provider "
            f"({naira(provider - quoted)})."
        )
    if provider is not None and quoted is not None and provider < quoted:
        advice.append(
            f"The provider charged less than it quoted ({naira(provider)} against "
            f"{naira(quoted)}): nothing to claim; book the provider's fee."
        )
    if provider is not None and webhook is not None and webhook != provider:
        advice.append(
            f"The webhook's fee ({naira(webhook)}) differs from the provider's record "
            f"({naira(provider)}), which counts: the webhook was wrong or tampered with; "
            f"{_SENDER_CHECKS}." + (" Nothing to claim." if provider == quoted else "")
        )
    if provider is None and webhook is not None and quoted is not None and webhook != quoted:
        advice.append(
            f"Only the webhook reports a different fee ({naira(webhook)} against the quoted "
            f"{naira(quoted)}), and the provider has not confirmed it yet (it is checked again "
            "automatically): claim nothing on the webhook's word."
        )
    if contract is not None and provider is not None and provider > contract:
        advice.append(
            f"The provider charged more than your contract allows ({naira(provider)} against "
            f"{naira(contract)}): claim the difference from the provider, or have the contract "
            "fees updated if the contract changed."
        )
    if contract is not None and provider is None and webhook is not None and webhook > contract:
        advice.append(
            f"The webhook's fee ({naira(webhook)}) is above your contract's {naira(contract)}, "
            "but the provider has not confirmed a fee yet: wait for its record before claiming "
            "anything."
        )
    return advice
