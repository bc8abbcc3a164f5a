"""The relay's stable names: event types, subjects, delivery states (docs/rules.md: Relay)."""

from __future__ import annotations

import enum


class RelayEventType(enum.StrEnum):
    """The event types payrecon sends (stable)."""

    TRANSFER_CONFIRMED = "transfer.confirmed"
    TRANSFER_REPORTED = "transfer.reported"
    TRANSFER_REVERSED = "transfer.reversed"  # a confirmed success came back (Reversals)
    COLLECTION_CONFIRMED = "collection.confirmed"
    FINDING_OPENED = "finding.opened"
    FINDING_RESOLVED = "finding.resolved"
    FINDING_ACKNOWLEDGED = "finding.acknowledged"


# What an endpoint gets when it lists no types: everything but webhook evidence, which the
# provider's API has not confirmed.
DEFAULT_TYPES = frozenset(RelayEventType) - {RelayEventType.TRANSFER_REPORTED}


class Subject(enum.StrEnum):
    """What an event is about; `sequence` counts per subject."""

    TRANSFER = "transfer"
    COLLECTION = "collection"
    STATEMENT_LINE = "statement_line"  # named by its id: `statement_line:17`


class DeliveryStatus(enum.StrEnum):
    """Where one event stands with one endpoint."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"  # every attempt of the schedule failed


class AttemptOutcome(enum.StrEnum):
    """What one attempt led to."""

    DELIVERED = "delivered"
    RETRY = "retry"
    FAILED = "failed"  # the last attempt: the delivery failed for good


def parse_types(value: str | None) -> frozenset[RelayEventType]:
    """The event types of a comma list (None or blank: the default set); ValueError names an
    unknown one."""
    if value is None or not value.strip():
        return DEFAULT_TYPES
    found = set()
    for part in value.split(","):
        name = part.strip()
        if not name:
            continue
        try:
            found.add(RelayEventType(name))
        except ValueError:
            known = ", ".join(sorted(RelayEventType))
            raise ValueError(f"unknown event type {name!r} (known: {known})") from None
    return frozenset(found)
