"""The rules that apply one webhook event to the ledger: a pure function, no I/O.

`decide` takes what the ledger already holds for an event (the content hash of the logical
event recorded under its key, the transfers its references name) and returns the delivery's
outcome, the row changes, the findings to raise, with their texts, and the relay event the
change causes (`transfer.reported`; each finding actually opened adds a `finding.opened`,
written by whoever opens it, since only the ledger knows whether it was open). The per-delivery path
(`receiver.apply`), the group-commit batch (`receiver.batch`) and replay (`receiver.replay`)
fetch those rows, call it and write what it returns, so they cannot decide differently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from ledger.events import payloads
from ledger.subjects import checkable_row
from ledger.types import DeliveryOutcome, FindingKind, TransferOrigin, TransferStatus
from receiver.events import IgnoredEvent, TransferEvent

T = TypeVar("T")

# The time a decision writes (next_check_at, updated_at, created_at). The rules only pass it
# through, so the batch hands it over already as its driver binds it, converted once.
Stamp = Any

_WEBHOOK = TransferOrigin.WEBHOOK.value
_FAILED = TransferStatus.FAILED

# The transfer columns the rules read, in HeldTransfer's order.
HELD_COLUMNS = (
    "id",
    "reference",
    "provider_reference",
    "webhook_status",
    "confirmed",
    "event_sequence",
)


@dataclass(slots=True)
class HeldTransfer:
    """The columns of a transfer the rules read; `id` is None until the ledger stores it.

    A shell deciding several events in one go keeps one copy per transfer and lets it
    `absorb` each decision's changes, so the next event sees them as if they were stored.
    """

    id: int | None
    reference: str
    provider_reference: str | None
    webhook_status: str | None
    confirmed: bool
    # The sequence of the transfer's last relay event; a shell that numbers events itself
    # (the batch) raises it as it goes.
    event_sequence: int = 0

    def absorb(self, changes: Mapping[str, Any]) -> None:
        """Take in the changes of a decision on this transfer."""
        if "provider_reference" in changes:
            self.provider_reference = changes["provider_reference"]
        if "webhook_status" in changes:
            self.webhook_status = changes["webhook_status"]


def index_transfers(
    rows: Iterable[Sequence[Any]],
) -> tuple[dict[str, HeldTransfer], dict[str, HeldTransfer]]:
    """Transfers read as HELD_COLUMNS, by merchant's reference and by provider's reference."""
    by_reference: dict[str, HeldTransfer] = {}
    by_provider: dict[str, HeldTransfer] = {}
    for transfer_id, reference, provider_reference, webhook_status, confirmed, sequence in rows:
        # bool(): SQLite's driver gives 0 or 1.
        held = HeldTransfer(
            transfer_id, reference, provider_reference, webhook_status, bool(confirmed), sequence
        )
        by_reference[reference] = held
        if provider_reference:
            by_provider[provider_reference] = held
    return by_reference, by_provider


class NewFinding(NamedTuple):
    """A finding to raise on the decision's transfer."""

    kind: FindingKind
    detail: str


@dataclass(slots=True)
class Decision:
    """What to do with one event.

    ACCEPTED records the event on `transfer`: `changes` are the columns the event sets on
    it, and `created`, for a transfer the ledger never knew, its whole row (`changes`
    included). `reported` is the data of the `transfer.reported` event the change causes:
    set when the event is the first webhook outcome of a transfer the provider's API has not
    confirmed. Each of `findings` the shell actually opens (or reopens) causes a
    `finding.opened`, written after `transfer.reported`.
    A DUPLICATE or CONFLICTING repeat writes nothing but its findings, on the transfer of
    the event recorded first.
    """

    outcome: DeliveryOutcome
    transfer: HeldTransfer | None = None
    created: dict[str, Any] | None = None
    changes: dict[str, Any] | None = None
    findings: tuple[NewFinding, ...] = ()
    reported: dict[str, Any] | None = None


def match(
    event: TransferEvent, by_reference: Mapping[str, T], by_provider: Mapping[str, T]
) -> T | None:
    """The transfer an event is about: by the merchant's reference, else by the provider's
    (docs/rules.md: References); a merchant's reference wins over an equal provider's one."""
    if event.merchant_reference:
        found = by_reference.get(event.merchant_reference) or by_provider.get(
            event.merchant_reference
        )
        if found is not None:
            return found
    return by_reference.get(event.reference) or by_provider.get(event.reference)


def decide(
    event: TransferEvent,
    *,
    recorded_hash: str | None,
    by_reference: Mapping[str, HeldTransfer],
    by_provider: Mapping[str, HeldTransfer],
    now: Stamp,
) -> Decision:
    """Decide one event against what the ledger holds.

    `recorded_hash` is the content hash of the event already recorded under the event's key
    (or its webhook id), None when there is none; `by_reference` and `by_provider` hold every
    transfer whose merchant's or provider's reference is one of the event's references.
    """
    if recorded_hash is not None:
        return repeat(event, recorded_hash)
    transfer = match(event, by_reference, by_provider)
    if transfer is not None:
        return apply_to(
            event, transfer, by_reference=by_reference, by_provider=by_provider, now=now
        )
    transfer, created = _orphan(event, now)
    orphan = NewFinding(
        FindingKind.ORPHAN_EVENT,
        f"{event.event.value} for {event.reference} "
        f"(merchant reference {event.merchant_reference or 'none'}) that the ledger "
        "never initiated or expected",
    )
    # A new transfer has no webhook status yet, so no status conflict; it already carries
    # the provider's reference (reference_taken is moot).
    changes, _ = transfer_changes(event, transfer, reference_taken=True, now=now)
    created.update(changes)
    return Decision(
        DeliveryOutcome.ACCEPTED,
        transfer,
        created,
        changes,
        (orphan,),
        report_of(event, transfer, changes),
    )


def apply_to(
    event: TransferEvent,
    transfer: HeldTransfer,
    *,
    by_reference: Mapping[str, HeldTransfer],
    by_provider: Mapping[str, HeldTransfer],
    now: Stamp,
) -> Decision:
    """An event applied to a transfer the ledger holds (replay applies recorded ones again)."""
    taken = event.reference in by_reference or event.reference in by_provider
    changes, conflict = transfer_changes(event, transfer, reference_taken=taken, now=now)
    findings = () if conflict is None else (conflict,)
    reported = report_of(event, transfer, changes)
    return Decision(DeliveryOutcome.ACCEPTED, transfer, None, changes, findings, reported)


def not_applied(parsed: IgnoredEvent | None, invalid: DeliveryOutcome) -> DeliveryOutcome:
    """The outcome of a delivery with no event to apply: `invalid` (what parsing refused it
    as) when nothing parsed, IGNORED for an event type the receiver does not apply."""
    return invalid if parsed is None else DeliveryOutcome.IGNORED


def repeat(event: TransferEvent, recorded_hash: str) -> Decision:
    """A copy of a recorded event: a duplicate, or a conflict when its content differs."""
    if recorded_hash == event.content_hash:
        return Decision(DeliveryOutcome.DUPLICATE)
    return Decision(
        DeliveryOutcome.CONFLICTING,
        findings=(
            NewFinding(
                FindingKind.CONFLICTING_DELIVERY,
                f"{event.event.value} for {event.reference} was delivered again with "
                "different content; the first delivery stays applied",
            ),
        ),
    )


def transfer_changes(
    event: TransferEvent, transfer: HeldTransfer, *, reference_taken: bool, now: Stamp
) -> tuple[dict[str, Any], NewFinding | None]:
    """The columns an applied event sets on its transfer, and a status conflict if any.

    `reference_taken` says whether some transfer's merchant's or provider's reference is
    already the event's provider reference (then it is not recorded again on this one).
    """
    # Every applied webhook makes the transfer due at once: a webhook is evidence, not proof.
    changes: dict[str, Any] = {"next_check_at": now, "updated_at": now}
    if transfer.provider_reference is None and not reference_taken:
        changes["provider_reference"] = event.reference
    status = event.status.value
    if transfer.webhook_status is None:
        changes["webhook_status"] = status
        changes["webhook_amount"] = event.amount
        changes["webhook_fee"] = event.fee
        if event.failure_reason is not None:
            changes["failure_reason"] = event.failure_reason
        if not transfer.confirmed:
            changes["status"] = status
        return changes, None
    if transfer.webhook_status != status and transfer.confirmed and event.status is _FAILED:
        # Reversals (docs/rules.md): a failure reported after the provider confirmed the transfer
        # is evidence of a reversal, not two webhooks contradicting each other. It replaces the
        # success the webhook reported; the lookup it makes due decides (a reversal if the
        # provider agrees, status_conflict if it still says successful).
        changes["webhook_status"] = status
        if event.failure_reason is not None:
            changes["failure_reason"] = event.failure_reason
        return changes, None
    if transfer.webhook_status != status:
        # Both outcomes arrived; the first stays, the provider's answer will decide.
        return changes, NewFinding(
            FindingKind.STATUS_CONFLICT,
            f"webhooks reported both {transfer.webhook_status} and {status} for {event.reference}",
        )
    return changes, None


def report_of(
    event: TransferEvent, transfer: HeldTransfer, changes: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The data of `transfer.reported` when the changes set the first webhook outcome of a
    transfer the provider's API has not confirmed (docs/rules.md: Relay), else None."""
    if "webhook_status" not in changes or transfer.confirmed:
        return None
    return payloads.transfer_reported(
        reference=transfer.reference,
        provider_reference=changes.get("provider_reference", transfer.provider_reference),
        status=changes["webhook_status"],
        webhook_amount=event.amount,
        webhook_fee=event.fee,
        failure_reason=event.failure_reason,
    )


def _orphan(event: TransferEvent, now: Stamp) -> tuple[HeldTransfer, dict[str, Any]]:
    # A transfer first heard of in a webhook: created from the event, keyed by the merchant's
    # reference when the event carries one.
    reference = event.merchant_reference or event.reference
    transfer = HeldTransfer(None, reference, event.reference, None, False)
    # Due when the event's changes say so (transfer_changes sets next_check_at).
    row = checkable_row(
        now=now,
        next_check_at=None,
        reference=reference,
        provider_reference=event.reference,
        origin=_WEBHOOK,
        status=event.status.value,
    )
    return transfer, row
