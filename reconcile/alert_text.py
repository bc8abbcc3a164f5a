"""What an alert says: one plain-text title/body per finding, money in naira, pure."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol

from reconcile.advice import Figures, what_to_do
from reconcile.durations import describe_duration
from reconcile.reports.naira import naira, naira_text


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
    pending = describe_duration(age_seconds)
    escalation = f" (escalation {step}, pending {pending})" if step > 1 else ""
    title = f"payrecon: {kind} on transfer {facts.reference}{escalation}"
    lines = [
        f"What happened: {kind.replace('_', ' ')} — {naira_text(detail)}.",
        f"Transfer: {facts.reference} (provider reference "
        f"{facts.provider_reference or 'not known yet'}), status {facts.status}"
        f"{' (confirmed by the provider)' if facts.confirmed else ' (not confirmed)'}.",
        f"Amount: expected {naira(facts.amount)}, provider {naira(facts.provider_amount)}, "
        f"webhook {naira(facts.webhook_amount)}.",
        f"Fee: quoted {naira(facts.fee)}, provider {naira(facts.provider_fee)}, "
        f"webhook {naira(facts.webhook_fee)}.",
        f"What to do: {what_to_do(kind, Figures.of(facts, detail))}",
    ]
    return title, "\n".join(lines)


class CollectionFacts(Protocol):
    """The collection's figures an alert shows (a `Collection` row has them)."""

    @property
    def reference(self) -> str: ...
    @property
    def provider_reference(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def confirmed(self) -> bool: ...
    @property
    def amount(self) -> int: ...
    @property
    def amount_paid(self) -> int | None: ...
    @property
    def fee(self) -> int | None: ...
    @property
    def provider_fee(self) -> int | None: ...
    @property
    def expires_at(self) -> dt.datetime | None: ...
    @property
    def paid_at(self) -> dt.datetime | None: ...


def collection_alert(kind: str, detail: str, facts: CollectionFacts) -> tuple[str, str]:
    """The (title, body) of the alert for one finding on a collection."""
    title = f"payrecon: {kind} on collection {facts.reference}"
    lines = [
        f"What happened: {kind.replace('_', ' ')} — {naira_text(detail)}.",
        f"Collection: {facts.reference} (provider reference "
        f"{facts.provider_reference or 'not known yet'}), status {facts.status}"
        f"{' (confirmed by the provider)' if facts.confirmed else ' (not confirmed)'}.",
        f"Amount: expected {naira(facts.amount)}, paid {naira(facts.amount_paid)}.",
        f"Fee: quoted {naira(facts.fee)}, charged {naira(facts.provider_fee)}.",
        f"Expires at: {_when(facts.expires_at)}; paid at: {_when(facts.paid_at)}.",
        f"What to do: {what_to_do(kind)}",
    ]
    return title, "\n".join(lines)


class LineFacts(Protocol):
    """A statement line's figures an alert shows (a `StatementLine` row has them)."""

    @property
    def id(self) -> int | None: ...
    @property
    def date(self) -> dt.date: ...
    @property
    def amount(self) -> int: ...
    @property
    def direction(self) -> str: ...
    @property
    def reference(self) -> str: ...
    @property
    def narration(self) -> str: ...
    @property
    def state(self) -> str: ...


def line_alert(kind: str, detail: str, account: str, facts: LineFacts) -> tuple[str, str]:
    """The (title, body) of the alert for one finding on a statement line."""
    title = f"payrecon: {kind} on statement line {facts.id}"
    lines = [
        f"What happened: {kind.replace('_', ' ')} — {naira_text(detail)}.",
        f"Statement line {facts.id} of {account}, {facts.date.isoformat()}: {facts.direction} "
        f"{naira(facts.amount)}, reference {facts.reference or '—'}, "
        f"narration {facts.narration or '—'}; {facts.state}.",
        f"What to do: {what_to_do(kind)}",
    ]
    return title, "\n".join(lines)


def _when(value: dt.datetime | None) -> str:
    return "—" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


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
