"""The outbox for a bulk writer: events, their deliveries and newly opened findings gathered as
rows and written with the writer's other multi-row statements (`ledger.bulk`).

`ledger.events.outbox.emit` and `ledger.events.findings` write one event at a time through
SQLAlchemy, numbering each in the database. A group-commit batch decides hundreds of changes
at once and cannot afford a round trip per event, so it numbers its subjects' events itself
(it holds their rows locked) and hands them here; this module owns what those rows look like,
so the outbox's rules (an event's body, which endpoints take it, the order rule's key, a
finding opened once per subject and kind) live in one package whichever writer uses them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ledger.bulk import Bulk, Statement, table_columns
from ledger.events import payloads
from ledger.events.ids import new_event_id
from ledger.events.outbox import (
    SUBSCRIBERS_SQL,
    Subscriber,
    as_subscribers,
    delivery_rows,
    subject_key,
    takers,
)
from ledger.events.types import RelayEventType, Subject
from ledger.models import Finding, RelayDelivery, RelayEvent
from ledger.types import FindingKind

_FINDINGS = Finding.__table__  # type: ignore[attr-defined]
_EVENTS = RelayEvent.__table__  # type: ignore[attr-defined]
_DELIVERIES = RelayDelivery.__table__  # type: ignore[attr-defined]

_OPENED = ("id", "subject", "subject_id", "kind", "detail", "opened_at", "updated_at")
_EVENT = ("id", "event_id", "type", "subject", "subject_id", "reference", "sequence", "body")
_EVENT_ROW = (*_EVENT, "created_at", "traceparent")
_DELIVERY = (
    "event_id",
    "endpoint_id",
    "subject_key",
    "sequence",
    "status",
    "attempts",
    "next_attempt_at",
    "created_at",
    "updated_at",
)


@dataclass
class BulkOutbox:
    """The outbox rows of one bulk write, in the caller's transaction.

    Use: `reads(...)` joins the writer's first round trip (subscribers, reserved ids);
    `take_reads(...)` keeps their answers; `event` and `open_finding` gather rows as the
    writer decides; `writes()` gives the statements that store them.
    """

    bulk: Bulk
    now: dt.datetime
    stamp: Any  # `now` as the driver binds it (Bulk.time)
    now_iso: str = ""
    subscribers: list[Subscriber] = field(default_factory=list)
    events: list[tuple[Any, ...]] = field(default_factory=list)
    deliveries: list[tuple[Any, ...]] = field(default_factory=list)
    opened: dict[tuple[int, str], tuple[Any, ...]] = field(default_factory=dict)
    _event_ids: Iterator[int] = field(default_factory=lambda: iter(()))
    _finding_ids: Iterator[int] = field(default_factory=lambda: iter(()))
    _wanted: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        self.now_iso = payloads.iso(self.now) or ""

    def reads(self, *, events: int, findings: int) -> list[Statement]:
        """The statements to send with the writer's reads: the subscribers, and ids for at
        most `events` events and `findings` findings."""
        self._wanted = (events, findings)
        return [
            Statement(SUBSCRIBERS_SQL, (), returns_rows=True),
            self.bulk.reserve_ids("relay_event", events),
            self.bulk.reserve_ids("finding", findings),
        ]

    def take_reads(
        self, subscribers: list[Any], event_ids: list[Any], finding_ids: list[Any]
    ) -> None:
        """Keep the answers of `reads`' statements, in their order."""
        events, findings = self._wanted
        self.subscribers = as_subscribers(subscribers)
        self._event_ids = iter(self.bulk.reserved(event_ids, events))
        self._finding_ids = iter(self.bulk.reserved(finding_ids, findings))

    def event(
        self,
        *,
        type: RelayEventType,
        subject: Subject,
        subject_id: int,
        reference: str,
        sequence: int,
        data: dict[str, Any],
        traceparent: str | None = None,
    ) -> None:
        """Gather one event (numbered `sequence` in its subject by the writer) and a pending
        delivery for each endpoint that takes its type.

        `traceparent`: the trace context of the request that caused it (tracing on only), so
        its delivery continues that request's trace (ledger.events.trace)."""
        row_id = next(self._event_ids)
        event_id = new_event_id()
        body = payloads.body(
            event_id=event_id, type=type, timestamp=self.now_iso, sequence=sequence, data=data
        )
        values = (row_id, event_id, type.value, subject.value, subject_id, reference, sequence)
        self.events.append((*values, body, self.stamp, traceparent))
        targets = takers(self.subscribers, type)
        if targets:
            key = subject_key(subject, reference)
            for row in delivery_rows(row_id, targets, key=key, sequence=sequence, now=self.stamp):
                self.deliveries.append(tuple(row[name] for name in _DELIVERY))

    def open_finding(
        self,
        *,
        transfer_id: int,
        reference: str,
        kind: FindingKind,
        detail: str,
        next_sequence: Callable[[], int],
        traceparent: str | None = None,
    ) -> bool:
        """Open a finding on a transfer this write creates (it has none yet), with its
        `finding.opened` event; False when this write opened that kind on it already."""
        key = (transfer_id, kind.value)
        if key in self.opened:
            return False
        finding_id = next(self._finding_ids)
        self.opened[key] = (
            finding_id,
            Subject.TRANSFER.value,
            transfer_id,
            kind.value,
            detail,
            self.stamp,
            self.stamp,
        )
        data = payloads.finding_fields(
            id=finding_id,
            kind=kind.value,
            subject=Subject.TRANSFER,
            reference=reference,
            detail=detail,
            opened_at=self.now,
            resolved_at=None,
            acknowledged_at=None,
        )
        self.event(
            type=RelayEventType.FINDING_OPENED,
            subject=Subject.TRANSFER,
            subject_id=transfer_id,
            reference=reference,
            sequence=next_sequence(),
            data=data,
            traceparent=traceparent,
        )
        return True

    def writes(self) -> list[Statement]:
        """The statements storing the gathered findings, events and deliveries, in key order."""
        bulk = self.bulk
        return [
            *bulk.insert("finding", table_columns(_FINDINGS, _OPENED), list(self.opened.values())),
            *bulk.insert("relay_event", table_columns(_EVENTS, _EVENT_ROW), self.events),
            *bulk.insert("relay_delivery", table_columns(_DELIVERIES, _DELIVERY), self.deliveries),
        ]
