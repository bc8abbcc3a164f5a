"""The records the sandbox keeps, and how each is shown on the wire."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


class Status(enum.StrEnum):
    """Status of a transfer or a collection's transaction."""

    PENDING = "pending"
    SUCCESSFUL = "successful"
    FAILED = "failed"


class EventType(enum.StrEnum):
    """Webhook events (spec, Events)."""

    TRANSFER_SUCCESS = "transfer.success"
    TRANSFER_FAILED = "transfer.failed"


def iso(timestamp: float | None) -> str | None:
    """ISO-8601 UTC with milliseconds and a Z, or None."""
    if timestamp is None:
        return None
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Transfer:
    """A payout, with what was quoted, what was charged and what the webhook said."""

    reference: str  # the provider's
    merchant_reference: str
    amount: int
    bank_code: str
    account_number: str
    account_name: str
    fee_quoted: int
    created_at: float
    planned_status: Status
    planned_reason: str | None
    faults: frozenset[str]
    status: Status = Status.PENDING
    fee_charged: int = 0
    failure_reason: str | None = None
    completed_at: float | None = None
    forced: bool = False
    webhook_amount: int | None = None
    webhook_fee: int | None = None
    reversed_at: float | None = None  # a success reversed later (its status is then failed)

    def transaction(self) -> dict[str, Any]:
        """The lookup answer's `data` (GET /v1/transaction/{reference})."""
        return {
            "reference": self.reference,
            "merchant_reference": self.merchant_reference,
            "type": "transfer",
            "amount": self.amount,
            "fee": self.fee_charged,
            "status": self.status.value,
            "failure_reason": self.failure_reason,
            "created_at": iso(self.created_at),
            "completed_at": iso(self.completed_at),
        }

    def inspect(self) -> dict[str, Any]:
        """The whole truth, for GET /_sandbox/transfers."""
        return {
            **self.transaction(),
            "bank_code": self.bank_code,
            "account_number": self.account_number,
            "account_name": self.account_name,
            "fee_quoted": self.fee_quoted,
            "fee_charged": self.fee_charged,
            "faults": sorted(self.faults),
            "forced": self.forced,
            "webhook_amount": self.webhook_amount,
            "webhook_fee": self.webhook_fee,
            "reversed_at": iso(self.reversed_at),
        }


@dataclass
class Collection:
    """A bank-transfer collection and the transaction it becomes when paid."""

    reference: str  # the provider's
    merchant_reference: str
    amount: int
    fee_quoted: int
    account_number: str
    account_name: str
    bank_name: str
    created_at: float
    expires_at: float
    customer: dict[str, str]
    meta: dict[str, Any]
    status: Status = Status.PENDING
    amount_paid: int | None = None
    fee_charged: int | None = None
    failure_reason: str | None = None
    completed_at: float | None = None
    faults: list[str] = field(default_factory=list)  # per-collection faults that applied
    stuck: bool = False  # the stuck_pending fault: never expires while unpaid

    def created(self) -> dict[str, Any]:
        """The create answer's `data` (spec, Bank transfer collection)."""
        return {
            "reference": self.merchant_reference,
            "account_number": self.account_number,
            "account_name": self.account_name,
            "bank_name": self.bank_name,
            "amount": self.amount,
            "fee": self.fee_quoted,
            "expires_at": iso(self.expires_at),
        }

    def transaction(self) -> dict[str, Any]:
        """The lookup answer's `data`; figures are what was paid once it was (an underpayment
        reads failed with the amount received)."""
        successful = self.status is Status.SUCCESSFUL
        return {
            "reference": self.reference,
            "merchant_reference": self.merchant_reference,
            "type": "collection",
            "amount": self.amount if self.amount_paid is None else self.amount_paid,
            "fee": self.fee_charged if successful else self.fee_quoted,
            "status": self.status.value,
            "failure_reason": self.failure_reason,
            "created_at": iso(self.created_at),
            "completed_at": iso(self.completed_at),
        }


@dataclass
class VirtualAccount:
    """A merchant-issued virtual account."""

    uid: str
    type: str
    account_number: str
    account_name: str
    bank_name: str
    customer: dict[str, str]
    expected_amount: int | None
    meta: dict[str, Any]
    created_at: float
    status: str = "active"

    def record(self) -> dict[str, Any]:
        """The record as endpoints 1-4 answer it."""
        return {
            "uid": self.uid,
            "type": self.type,
            "status": self.status,
            "account_number": self.account_number,
            "account_name": self.account_name,
            "bank_name": self.bank_name,
            "customer": dict(self.customer),
            "expected_amount": self.expected_amount,
            "meta": self.meta,
            "created_at": iso(self.created_at),
        }


@dataclass(frozen=True)
class WhitelistEntry:
    """One whitelisted address; only the description may change (by replacement)."""

    id: str
    ip: str
    description: str
    created_at: float

    def record(self) -> dict[str, Any]:
        """As the control routes show it."""
        return {
            "id": self.id,
            "ip": self.ip,
            "description": self.description,
            "created_at": iso(self.created_at),
        }


@dataclass(frozen=True)
class WebhookEvent:
    """One webhook to deliver, with the faults that apply to its delivery."""

    event: EventType
    data: dict[str, Any]
    reference: str
    merchant_reference: str
    faults: frozenset[str] = frozenset()
    delay: float = 0.0

    def body(self) -> dict[str, Any]:
        """The JSON body sent (spec: `event` and `data`)."""
        return {"event": self.event.value, "data": dict(self.data)}


@dataclass(frozen=True)
class WebhookAttempt:
    """One delivery attempt (or a dropped delivery), as GET /_sandbox/webhooks shows it."""

    id: int
    time: float
    url: str | None
    event: str
    reference: str
    merchant_reference: str
    body: dict[str, Any]
    attempt: int
    copy: int
    status_code: int | None
    error: str | None
    faults: tuple[str, ...] = field(default=())
    dropped: bool = False

    def record(self) -> dict[str, Any]:
        """As the control route shows it."""
        ok = self.status_code is not None and 200 <= self.status_code < 300
        return {
            "id": self.id,
            "time": iso(self.time),
            "url": self.url,
            "event": self.event,
            "reference": self.reference,
            "merchant_reference": self.merchant_reference,
            "body": self.body,
            "attempt": self.attempt,
            "copy": self.copy,
            "status_code": self.status_code,
            "error": self.error,
            "delivered": ok,
            "dropped": self.dropped,
            "faults": list(self.faults),
        }
