"""Shared column types and enums of the ledger."""

from __future__ import annotations

import datetime as dt
import enum
import re
from typing import Any

from sqlalchemy import BigInteger, DateTime, Dialect, Integer
from sqlalchemy.types import TypeDecorator

# SQLite only autoincrements INTEGER PRIMARY KEY; PostgreSQL gets a 64-bit key.
BigIntKey = BigInteger().with_variant(Integer(), "sqlite")


# The longest merchant reference the ledger stores (spec: Events); webhooks and operators alike.
MAX_REFERENCE = 100
# Control characters break logs and PostgreSQL text (NUL); lone surrogates cannot be encoded.
_UNSAFE = re.compile("[\x00-\x1f\ud800-\udfff]")


def storable(text: str) -> bool:
    """True unless `text` holds a control character (PostgreSQL's text refuses NUL) or an
    unpaired surrogate (no database encoding takes one): what a reference may hold."""
    # Printable ASCII (the usual case) cannot hold what _UNSAFE looks for; skip the regex.
    return (text.isascii() and text.isprintable()) or not _UNSAFE.search(text)


def _is_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udfff"


def takes_text(value: str) -> bool:
    """True when every column of the ledger can hold `value` on both databases: no NUL
    (PostgreSQL's text refuses it) and no unpaired surrogate (no encoding takes one)."""
    if value.isascii():
        return "\x00" not in value
    return "\x00" not in value and not any(_is_surrogate(char) for char in value)


def storable_text(value: str) -> str:
    """`value` made something the ledger can hold: NUL dropped, an unpaired surrogate shown as
    U+FFFD; unchanged when it already was."""
    if takes_text(value):
        return value
    return "".join("\ufffd" if _is_surrogate(char) else char for char in value if char != "\x00")


def utcnow() -> dt.datetime:
    """The current time, timezone-aware UTC."""
    return dt.datetime.now(dt.UTC)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """Timezone-aware UTC in Python; naive UTC in SQLite, timestamptz in PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the ledger")
        value = value.astimezone(dt.UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        parsed: dt.datetime = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=dt.UTC)
        return parsed.astimezone(dt.UTC)


class TransferStatus(enum.StrEnum):
    """Status of a transfer (spec: States and transitions)."""

    PENDING = "pending"
    SUCCESSFUL = "successful"
    FAILED = "failed"
    # A confirmed success that came back (docs/rules.md: Reversals); final, `confirmed` stays true.
    REVERSED = "reversed"


class ReversalSource(enum.StrEnum):
    """How a reversal was found (docs/rules.md: Reversals, `reversal_source`)."""

    LOOKUP = "lookup"  # a re-verification answered failed
    WEBHOOK = "webhook"  # a transfer.failed webhook, confirmed by a lookup
    STATEMENT = "statement"  # a credit on the wallet statement


# The statuses the provider's API and webhooks know (spec: States and transitions); `reversed`
# is payrecon's own word for a success that came back, never the provider's.
PROVIDER_STATUSES = (TransferStatus.PENDING, TransferStatus.SUCCESSFUL, TransferStatus.FAILED)


def status_or_none(value: str | None) -> TransferStatus | None:
    """The status a ledger column holds, or None when it is empty or not a known status."""
    try:
        return None if value is None else TransferStatus(value)
    except ValueError:
        return None


class TransferOrigin(enum.StrEnum):
    """How the ledger learnt of a transfer."""

    INITIATED = "initiated"  # paid out by payrecon itself
    EXPECTED = "expected"  # registered as initiated elsewhere
    WEBHOOK = "webhook"  # first heard of in a webhook (an orphan)


class Initiation(enum.StrEnum):
    """Where a payout initiated by payrecon stands with the provider."""

    INTENT = "intent"  # written before the provider call; the answer is not known yet
    ACCEPTED = "accepted"  # the provider answered pending with its reference and fee
    REJECTED = "rejected"  # the provider refused it; no money moved


class EventType(enum.StrEnum):
    """Webhook event types the receiver applies (spec: Events)."""

    TRANSFER_SUCCESS = "transfer.success"
    TRANSFER_FAILED = "transfer.failed"


class DeliveryOutcome(enum.StrEnum):
    """What the receiver did with one raw delivery."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    CONFLICTING = "conflicting"
    IGNORED = "ignored"
    INVALID = "invalid"  # 400/415/422: archived, not applied
    TOO_LARGE = "too_large"  # 413: the head is archived, not applied


class FindingKind(enum.StrEnum):
    """The stable finding kinds of docs/rules.md."""

    AMOUNT_MISMATCH = "amount_mismatch"
    FEE_MISMATCH = "fee_mismatch"
    STATUS_CONFLICT = "status_conflict"
    CONFLICTING_DELIVERY = "conflicting_delivery"
    ORPHAN_EVENT = "orphan_event"
    STALE_PENDING = "stale_pending"
    UNKNOWN_TO_PROVIDER = "unknown_to_provider"
    UNVERIFIABLE = "unverifiable"
    UNDERPAID = "underpaid"  # a collection: less paid than expected
    OVERPAID = "overpaid"  # a collection: more paid than expected
    PAID_AFTER_EXPIRY = "paid_after_expiry"  # a collection: paid after its expires_at
    REVERSED_AFTER_SUCCESS = "reversed_after_success"  # a confirmed success came back
    # Statements (docs/rules.md "Statements and period tie-out"): on a statement line…
    UNMATCHED_STATEMENT_LINE = "unmatched_statement_line"
    STATEMENT_BALANCE_GAP = "statement_balance_gap"
    # …on a transfer or collection…
    MISSING_FROM_STATEMENT = "missing_from_statement"
    STATEMENT_MISMATCH = "statement_mismatch"
    # …on either: something changed inside a locked period.
    CLOSED_PERIOD_CHANGED = "closed_period_changed"


class FindingState(enum.StrEnum):
    """Where a finding stands in the operators' queue (derived from its times)."""

    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
