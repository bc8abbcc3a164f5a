"""The `data` of each event type and the body around it: pure, from ledger rows.

The keys are docs/rules.md's (Relay: event types); money is integer kobo, times ISO-8601 UTC.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson

from ledger.events.types import RelayEventType, Subject
from ledger.models import Collection, Finding, Transfer


def iso(value: dt.datetime | None) -> str | None:
    """ISO-8601 UTC with a Z, or None."""
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def transfer_confirmed(transfer: Transfer) -> dict[str, Any]:
    """`transfer.confirmed`: the transfer record once the provider's API confirmed it."""
    return {
        "reference": transfer.reference,
        "provider_reference": transfer.provider_reference,
        "status": transfer.status,
        "amount": transfer.amount,
        "fee": transfer.fee,
        "provider_amount": transfer.provider_amount,
        "provider_fee": transfer.provider_fee,
        "failure_reason": transfer.failure_reason,
        "confirmed_at": iso(transfer.confirmed_at),
    }


def transfer_reversed(transfer: Transfer) -> dict[str, Any]:
    """`transfer.reversed`: a transfer confirmed successful that came back (docs/rules.md:
    Reversals)."""
    return {
        "reference": transfer.reference,
        "provider_reference": transfer.provider_reference,
        "amount": transfer.amount,
        "fee": transfer.fee,
        "failure_reason": transfer.failure_reason,
        "confirmed_at": iso(transfer.confirmed_at),
        "reversed_at": iso(transfer.reversed_at),
        "source": transfer.reversal_source,
    }


def collection_confirmed(collection: Collection) -> dict[str, Any]:
    """`collection.confirmed`: the collection once the provider's API confirmed its final
    status (docs/rules.md: Collections)."""
    return {
        "reference": collection.reference,
        "provider_reference": collection.provider_reference,
        "status": collection.status,
        "amount": collection.amount,
        "amount_paid": collection.amount_paid,
        "fee": collection.fee,
        "provider_fee": collection.provider_fee,
        "failure_reason": collection.failure_reason,
        "paid_at": iso(collection.paid_at),
        "confirmed_at": iso(collection.confirmed_at),
    }


def transfer_reported(
    *,
    reference: str,
    provider_reference: str | None,
    status: str,
    webhook_amount: int | None,
    webhook_fee: int | None,
    failure_reason: str | None,
) -> dict[str, Any]:
    """`transfer.reported`: what a webhook said, before the provider's API confirmed it."""
    return {
        "reference": reference,
        "provider_reference": provider_reference,
        "status": status,
        "webhook_amount": webhook_amount,
        "webhook_fee": webhook_fee,
        "failure_reason": failure_reason,
    }


def finding(
    finding: Finding, *, reference: str, subject: Subject = Subject.TRANSFER
) -> dict[str, Any]:
    """`finding.opened`, `.resolved` and `.acknowledged`: the finding as it now stands (an
    acknowledged one with its note)."""
    assert finding.id is not None
    fields = finding_fields(
        id=finding.id,
        kind=finding.kind,
        subject=subject,
        reference=reference,
        detail=finding.detail,
        opened_at=finding.opened_at,
        resolved_at=finding.resolved_at,
        acknowledged_at=finding.acknowledged_at,
    )
    if finding.acknowledged_at is not None:
        fields["note"] = finding.ack_note
    return fields


def finding_fields(
    *,
    id: int,
    kind: str,
    subject: Subject,
    reference: str,
    detail: str,
    opened_at: dt.datetime,
    resolved_at: dt.datetime | None,
    acknowledged_at: dt.datetime | None,
) -> dict[str, Any]:
    """`finding`'s data from its fields, for a writer that has no Finding object (the batch)."""
    return {
        "id": id,
        "kind": kind,
        "subject": subject.value,
        "reference": reference,
        "detail": detail,
        "opened_at": iso(opened_at),
        "resolved_at": iso(resolved_at),
        "acknowledged_at": iso(acknowledged_at),
    }


def body(
    *,
    event_id: str,
    type: RelayEventType,
    timestamp: dt.datetime | str,
    sequence: int,
    data: dict[str, Any],
) -> str:
    """The JSON body every attempt of the event sends, byte for byte; `timestamp` as a datetime
    or already `iso` (a writer making many events at one time formats it once)."""
    document = {
        "id": event_id,
        "type": type.value,
        "timestamp": timestamp if isinstance(timestamp, str) else iso(timestamp),
        "sequence": sequence,
        "data": data,
    }
    return orjson.dumps(document).decode()
