"""Apply a whole group-commit batch with a handful of set-based statements.

The per-delivery path (`receiver.apply`) issues about ten statements per delivery; here a batch
costs two reads and one multi-row write per table, whatever its size, sent through the driver
(`ledger.bulk`) because SQLAlchemy's per-row parameter processing cost more than the database
work itself. The reads, with the ids the new rows will take, go to the database together, and
so do all the writes: on PostgreSQL a batch costs three round trips (reads, writes, commit).
Every delivery is decided by `receiver.decisions` against the prefetched rows, in arrival
order, each decision seeing those before it. When another process races us for the same
transfer or event (an insert that hits a unique key), the transaction fails, and the batch
is retried one delivery at a time.

Relay events are numbered here too: the prefetch reads each transfer's `event_sequence` (under
the same lock) and the enabled endpoints, each decision's events take the next numbers in
decision order, and the event, delivery and sequence writes go in the same round trip as the
rest. Findings on transfers that existed before the batch (rare) are raised afterwards through
`ledger.events.findings`, which numbers their events in the database.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from ledger.bulk import Bulk, Statement, table_columns
from ledger.events import trace
from ledger.events.bulk import BulkOutbox
from ledger.events.findings import raise_finding
from ledger.events.outbox import wake_workers
from ledger.events.types import RelayEventType, Subject
from receiver.apply import (
    ARCHIVE_COLUMNS,
    DELIVERIES,
    EVENT_COLUMNS,
    EVENTS,
    TRANSFERS,
    Applied,
    IncomingDelivery,
    archive_row,
    event_row,
)
from receiver.decisions import (
    HELD_COLUMNS,
    Decision,
    HeldTransfer,
    NewFinding,
    decide,
    index_transfers,
    not_applied,
)
from receiver.errors import BatchRaceError
from receiver.events import TransferEvent

# A new transfer is written whole: its webhook values go into the INSERT itself.
_CREATED = (
    "id",
    "reference",
    "provider_reference",
    "origin",
    "status",
    "confirmed",
    "check_attempts",
    "not_found_count",
    "webhook_status",
    "webhook_amount",
    "webhook_fee",
    "failure_reason",
    "next_check_at",
    "event_sequence",
    "created_at",
    "updated_at",
)
# At most this many relay events per delivery: transfer.reported and one finding.opened.
_EVENTS_PER_DELIVERY = 2

_EventKey = tuple[str, str]  # (event, provider reference): a logical event's unique key


@dataclass
class _Plan:
    """What the batch knows of the ledger, kept current as each delivery is decided."""

    stamp: Any  # the batch's time as the driver binds it: every time a decision sets is it
    outbox: BulkOutbox  # the relay events and findings the decisions make
    by_reference: dict[str, HeldTransfer] = field(default_factory=dict)
    by_provider: dict[str, HeldTransfer] = field(default_factory=dict)
    # Recorded events: (id, content hash, transfer) by key.
    events: dict[_EventKey, tuple[int, str, HeldTransfer]] = field(default_factory=dict)
    by_webhook_id: dict[str, _EventKey] = field(default_factory=dict)
    created: dict[int, dict[str, Any]] = field(default_factory=dict)  # new transfers' rows, by id
    changes: dict[int, dict[str, Any]] = field(default_factory=dict)  # known transfers', by id
    new_events: list[tuple[Any, ...]] = field(default_factory=list)  # (id, *event_row)
    # Findings on transfers known before the batch, raised after the writes.
    # (transfer, finding, what its delivery did)
    findings: list[tuple[HeldTransfer, NewFinding, Applied]] = field(default_factory=list)
    # The trace context every relay event of the batch keeps: the batch span's (tracing on).
    traceparent: str | None = None
    # Ids reserved for the rows this batch creates (ledger.bulk.reserve_ids).
    transfer_ids: Iterator[int] = field(default_factory=lambda: iter(()))
    event_ids: Iterator[int] = field(default_factory=lambda: iter(()))


def apply_batch(
    session: Session, deliveries: list[IncomingDelivery], *, now: dt.datetime
) -> list[Applied]:
    """Decide, apply and archive every delivery of the batch; never commits."""
    bulk = Bulk(session.connection())
    events = [d.parsed for d in deliveries if isinstance(d.parsed, TransferEvent)]
    stamp = bulk.time(now)
    plan = _Plan(
        stamp=stamp, outbox=BulkOutbox(bulk, now=now, stamp=stamp), traceparent=trace.current()
    )
    if events:
        _prefetch(bulk, plan, events, [d.webhook_id for d in deliveries if d.webhook_id])
    results: list[Applied] = []
    event_of: list[_EventKey | None] = []
    for delivery in deliveries:
        parsed = delivery.parsed
        if isinstance(parsed, TransferEvent):
            applied, key = _apply(plan, parsed, delivery)
            results.append(applied)
            event_of.append(key)
        else:
            results.append(Applied(not_applied(parsed, delivery.invalid_outcome)))
            event_of.append(None)
    bulk.send([*_write(bulk, plan), *_archive(bulk, deliveries, results, event_of, plan)])
    if plan.outbox.deliveries:
        wake_workers(session)
    _raise_known_findings(session, plan, now)
    return results


def _prefetch(bulk: Bulk, plan: _Plan, events: list[TransferEvent], webhook_ids: list[str]) -> None:
    """Read what the batch's events name and reserve the ids of the rows it may create, in
    one round trip."""
    wanted = len(events)  # at most one new transfer and one new event per delivery
    recorded_where = [bulk.key_set("reference", {e.reference for e in events})]
    if webhook_ids:
        recorded_where.append(bulk.key_set("webhook_id", webhook_ids))
    outbox_reads = plan.outbox.reads(events=wanted * _EVENTS_PER_DELIVERY, findings=wanted)
    (
        *_,
        transfers,
        recorded,
        transfer_ids,
        event_ids,
        subscribers,
        relay_ids,
        finding_ids,
    ) = bulk.send(
        [
            *bulk.keyed_lookups_only(),
            _transfers_read(bulk, events, recorded_where),
            _events_read(recorded_where),
            bulk.reserve_ids("transfer", wanted),
            bulk.reserve_ids("webhook_event", wanted),
            *outbox_reads,
        ]
    )
    plan.outbox.take_reads(subscribers, relay_ids, finding_ids)
    plan.transfer_ids = iter(bulk.reserved(transfer_ids, wanted))
    plan.event_ids = iter(bulk.reserved(event_ids, wanted))
    plan.by_reference, plan.by_provider = index_transfers(transfers)
    _hold_events(plan, recorded)


def _transfers_read(
    bulk: Bulk, events: list[TransferEvent], recorded_where: list[tuple[str, Any]]
) -> Statement:
    """The transfers the events' references name, and the owners of their recorded events,
    locked until commit."""
    keys = {e.reference for e in events} | {
        e.merchant_reference for e in events if e.merchant_reference
    }
    by_reference, reference_keys = bulk.key_set("reference", keys)
    by_provider, provider_keys = bulk.key_set("provider_reference", keys)
    # Each branch is an index search; an OR of them would make PostgreSQL scan the table.
    # The owners of recorded events are fetched too: a past event may have been matched by a
    # merchant's reference that this batch's deliveries do not carry.
    owners = " UNION ALL ".join(
        [
            f"SELECT id FROM transfer WHERE {by_reference}",
            f"SELECT id FROM transfer WHERE {by_provider}",
            *(
                f"SELECT transfer_id FROM webhook_event WHERE {where}"
                for where, _ in recorded_where
            ),
        ]
    )
    return Statement(
        f"SELECT {', '.join(HELD_COLUMNS)} FROM transfer WHERE id IN ({owners}) ORDER BY id"
        # PostgreSQL: hold the rows until commit (BEGIN IMMEDIATE locks SQLite's file).
        + (" FOR UPDATE" if bulk.postgres else ""),
        [reference_keys, provider_keys, *(keys for _, keys in recorded_where)],
        returns_rows=True,
    )


def _events_read(recorded_where: list[tuple[str, Any]]) -> Statement:
    """The events recorded under the batch's provider references or webhook ids."""
    return Statement(
        "SELECT id, event, reference, content_hash, transfer_id, webhook_id FROM webhook_event "
        f"WHERE {' OR '.join(f'({where})' for where, _ in recorded_where)}",
        [keys for _, keys in recorded_where],
        returns_rows=True,
    )


def _hold_events(plan: _Plan, recorded: list[Any]) -> None:
    by_id = {held.id: held for held in plan.by_reference.values()}
    for event_id, name, reference, content_hash, transfer_id, webhook_id in recorded:
        owner = by_id.get(transfer_id)
        if owner is None:  # deleted or racing: let the per-delivery path decide
            raise BatchRaceError("event belongs to a transfer outside the batch")
        key = (name, reference)
        plan.events[key] = (event_id, content_hash, owner)
        if webhook_id:
            plan.by_webhook_id[webhook_id] = key


def _apply(
    plan: _Plan, event: TransferEvent, delivery: IncomingDelivery
) -> tuple[Applied, _EventKey]:
    """Decide one event against the plan, and take the decision into it."""
    webhook_id = delivery.webhook_id
    key = (event.event.value, event.reference)
    if key not in plan.events and webhook_id and webhook_id in plan.by_webhook_id:
        key = plan.by_webhook_id[webhook_id]
    recorded = plan.events.get(key)
    decision = decide(
        event,
        recorded_hash=None if recorded is None else recorded[1],
        by_reference=plan.by_reference,
        by_provider=plan.by_provider,
        now=plan.stamp,
    )
    applied = Applied(decision.outcome)
    transfer = recorded[2] if recorded is not None else _take(plan, decision, event, webhook_id)
    if decision.reported is not None:
        _relay(
            plan,
            transfer,
            RelayEventType.TRANSFER_REPORTED,
            decision.reported,
            traceparent=plan.traceparent,
        )
    for finding in decision.findings:
        _open(plan, transfer, finding, applied, traceparent=plan.traceparent)
    return applied, key


def _open(
    plan: _Plan,
    transfer: HeldTransfer,
    finding: NewFinding,
    applied: Applied,
    *,
    traceparent: str | None,
) -> None:
    """Open a finding of the decision: here when the batch created its transfer (which has
    none yet, so each kind is opened once), after the writes otherwise."""
    assert transfer.id is not None
    if transfer.id not in plan.created:
        plan.findings.append((transfer, finding, applied))
        return
    if plan.outbox.open_finding(
        transfer_id=transfer.id,
        reference=transfer.reference,
        kind=finding.kind,
        detail=finding.detail,
        next_sequence=lambda: _next_sequence(plan, transfer),
        traceparent=traceparent,
    ):
        applied.findings.append(finding.kind)


def _relay(
    plan: _Plan,
    transfer: HeldTransfer,
    type: RelayEventType,
    data: dict[str, Any],
    *,
    traceparent: str | None,
) -> None:
    """Take a relay event about the transfer into the plan, numbered next in its sequence."""
    assert transfer.id is not None
    plan.outbox.event(
        type=type,
        subject=Subject.TRANSFER,
        subject_id=transfer.id,
        reference=transfer.reference,
        sequence=_next_sequence(plan, transfer),
        data=data,
        traceparent=traceparent,
    )


def _next_sequence(plan: _Plan, transfer: HeldTransfer) -> int:
    """Raise the transfer's event sequence (held locked by the batch) and write it back."""
    assert transfer.id is not None
    transfer.event_sequence += 1
    row = plan.created.get(transfer.id) or plan.changes.setdefault(transfer.id, {})
    row["event_sequence"] = transfer.event_sequence
    return transfer.event_sequence


def _take(
    plan: _Plan, decision: Decision, event: TransferEvent, webhook_id: str | None
) -> HeldTransfer:
    """Take an accepted decision into the plan: its transfer's row, its event; the transfer."""
    transfer, changes = decision.transfer, decision.changes
    assert transfer is not None and changes is not None
    if decision.created is not None:
        transfer.id = next(plan.transfer_ids)
        plan.created[transfer.id] = decision.created
        plan.by_reference[transfer.reference] = transfer
    else:
        assert transfer.id is not None
        # A transfer this batch created takes later changes into its row instead.
        row = plan.created.get(transfer.id) or plan.changes.setdefault(transfer.id, {})
        row.update(changes)
    transfer.absorb(changes)
    if transfer.provider_reference is not None:
        plan.by_provider[transfer.provider_reference] = transfer
    event_id = next(plan.event_ids)
    key = (event.event.value, event.reference)
    plan.events[key] = (event_id, event.content_hash, transfer)
    if webhook_id:
        plan.by_webhook_id[webhook_id] = key
    plan.new_events.append((event_id, *event_row(event, webhook_id, transfer.id, plan.stamp)))
    return transfer


def _write(bulk: Bulk, plan: _Plan) -> list[Statement]:
    """The statements recording the batch's transfers, events, findings and relay events,
    in key order."""
    created = [
        (transfer_id, *[row.get(name) for name in _CREATED[1:]])
        for transfer_id, row in plan.created.items()
    ]
    return [
        *bulk.insert("transfer", table_columns(TRANSFERS, _CREATED), created),
        *bulk.insert(
            "webhook_event", table_columns(EVENTS, ("id", *EVENT_COLUMNS)), plan.new_events
        ),
        *_update_transfers(bulk, plan),
        *plan.outbox.writes(),
    ]


def _raise_known_findings(session: Session, plan: _Plan, now: dt.datetime) -> None:
    """Open (or reopen) the findings on transfers that existed before the batch, each with
    its event; rare."""
    for transfer, finding, applied in plan.findings:
        assert transfer.id is not None
        # Its event keeps the current span's trace context: the batch's (ledger.events.trace).
        raised = raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=transfer.id,
            kind=finding.kind,
            detail=finding.detail,
            now=now,
            reference=transfer.reference,
            endpoints=plan.outbox.subscribers,
        )
        if raised:
            applied.findings.append(finding.kind)
    session.flush()


def _update_transfers(bulk: Bulk, plan: _Plan) -> list[Statement]:
    # One executemany per distinct column set (usually one or two).
    groups: dict[tuple[str, ...], list[list[Any]]] = {}
    for transfer_id, values in sorted(plan.changes.items()):
        names = tuple(sorted(values))
        row = [values[name] for name in names]
        row.append(transfer_id)
        groups.setdefault(names, []).append(row)
    key = table_columns(TRANSFERS, ("id",))[0]
    return [
        statement
        for names, rows in groups.items()
        for statement in bulk.update("transfer", table_columns(TRANSFERS, names), key, rows)
    ]


def _archive(
    bulk: Bulk,
    deliveries: list[IncomingDelivery],
    results: list[Applied],
    event_of: list[_EventKey | None],
    plan: _Plan,
) -> list[Statement]:
    rows = []
    for delivery, applied, key in zip(deliveries, results, event_of, strict=True):
        if key is not None:
            event_id, _, transfer = plan.events[key]
            applied.event_id, applied.transfer_id = event_id, transfer.id
        rows.append(archive_row(delivery, applied, bulk.time(delivery.received_at)))
    return bulk.insert("delivery", table_columns(DELIVERIES, ARCHIVE_COLUMNS), rows)
