"""Apply a whole group-commit batch with a handful of set-based statements.

The per-delivery path (`receiver.apply`) issues about ten statements per delivery; here a batch
costs two reads and one multi-row write per table, whatever its size, sent through the driver
(`ledger.bulk`) because SQLAlchemy's per-row parameter processing cost more than the database
work itself. The reads, with the ids the new rows will take, go to the database together, and
so do all the writes: on PostgreSQL a batch costs three round trips (reads, writes, commit).
The outcome of every delivery is decided in Python from the prefetched rows, in arrival
order, exactly as the per-delivery path would decide it. When another process races us for
the same transfer or event (an insert that hits a unique key), the transaction fails, and the
batch is retried one delivery at a time.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from ledger.bulk import Bulk, Column, Statement
from ledger.findings import raise_finding
from ledger.types import DeliveryOutcome, FindingKind, TransferOrigin
from receiver.apply import Applied, IncomingDelivery
from receiver.events import IgnoredEvent, TransferEvent


class BatchRaceError(RuntimeError):
    """Another transaction wrote one of our keys first; retry the batch per delivery."""


@dataclass
class _TransferState:
    id: int | None
    reference: str
    provider_reference: str | None
    webhook_status: str | None
    confirmed: bool
    values: dict[str, Any] = field(default_factory=dict)
    new: bool = False


@dataclass
class _Plan:
    transfers: dict[str, _TransferState] = field(default_factory=dict)  # by merchant reference
    by_provider: dict[str, _TransferState] = field(default_factory=dict)
    events: dict[tuple[str, str], tuple[int | None, str, _TransferState]] = field(
        default_factory=dict
    )
    by_webhook_id: dict[str, tuple[str, str]] = field(default_factory=dict)
    # (id, event, reference, webhook_id, content_hash, payload, owner) of each event to record
    new_events: list[tuple[int, str, str, str | None, str, str, _TransferState]] = field(
        default_factory=list
    )
    findings: list[tuple[_TransferState, FindingKind, str, Applied]] = field(default_factory=list)
    # Ids reserved for the transfers and events this batch creates (ledger.bulk.reserve_ids).
    transfer_ids: Iterator[int] = field(default_factory=lambda: iter(()))
    event_ids: Iterator[int] = field(default_factory=lambda: iter(()))


def apply_batch(
    session: Session, deliveries: list[IncomingDelivery], *, now: dt.datetime
) -> list[Applied]:
    """Decide, apply and archive every delivery of the batch; never commits."""
    bulk = Bulk(session.connection())
    events = [d.parsed for d in deliveries if isinstance(d.parsed, TransferEvent)]
    plan = _Plan()
    if events:
        _prefetch(bulk, plan, events, [d.webhook_id for d in deliveries if d.webhook_id])
    results: list[Applied] = []
    event_of: list[tuple[str, str] | None] = []
    for delivery in deliveries:
        parsed = delivery.parsed
        if parsed is None:
            results.append(Applied(delivery.invalid_outcome))
            event_of.append(None)
        elif isinstance(parsed, IgnoredEvent):
            results.append(Applied(DeliveryOutcome.IGNORED))
            event_of.append(None)
        else:
            applied, key = _decide(plan, parsed, delivery.webhook_id, now)
            results.append(applied)
            event_of.append(key)
    bulk.send([*_write(bulk, plan, now), *_archive(bulk, deliveries, results, event_of, plan)])
    _raise_known_findings(session, plan, now)
    return results


def _prefetch(bulk: Bulk, plan: _Plan, events: list[TransferEvent], webhook_ids: list[str]) -> None:
    references = {e.reference for e in events}
    keys = references | {e.merchant_reference for e in events if e.merchant_reference}
    by_reference, reference_keys = bulk.key_set("reference", references)
    known = [by_reference]
    parameters = [reference_keys]
    if webhook_ids:
        by_webhook_id, webhook_keys = bulk.key_set("webhook_id", webhook_ids)
        known.append(by_webhook_id)
        parameters.append(webhook_keys)
    by_key, transfer_keys = bulk.key_set("reference", keys)
    by_provider, provider_keys = bulk.key_set("provider_reference", keys)
    # Each branch is an index search; an OR of them would make PostgreSQL scan the table.
    # The owners of known events are fetched too: a past event may have been matched by a
    # merchant's reference that this batch's deliveries do not carry.
    owners = " UNION ALL ".join(
        [
            f"SELECT id FROM transfer WHERE {by_key}",
            f"SELECT id FROM transfer WHERE {by_provider}",
            *(f"SELECT transfer_id FROM webhook_event WHERE {where}" for where in known),
        ]
    )
    # At most one new transfer and one new event per delivery.
    wanted = len(events)
    *_, transfers, known_events, transfer_ids, event_ids = bulk.send(
        [
            *bulk.keyed_lookups_only(),
            Statement(
                "SELECT id, reference, provider_reference, webhook_status, confirmed "
                f"FROM transfer WHERE id IN ({owners}) ORDER BY id"
                # PostgreSQL: hold the rows until commit (BEGIN IMMEDIATE locks SQLite's file).
                + (" FOR UPDATE" if bulk.postgres else ""),
                [transfer_keys, provider_keys, *parameters],
                returns_rows=True,
            ),
            Statement(
                "SELECT id, event, reference, content_hash, transfer_id, webhook_id "
                f"FROM webhook_event WHERE {' OR '.join(f'({where})' for where in known)}",
                parameters,
                returns_rows=True,
            ),
            bulk.reserve_ids("transfer", wanted),
            bulk.reserve_ids("webhook_event", wanted),
        ]
    )
    plan.transfer_ids = iter(bulk.reserved(transfer_ids, wanted))
    plan.event_ids = iter(bulk.reserved(event_ids, wanted))
    for transfer_id, reference, provider_reference, webhook_status, confirmed in transfers:
        state = _TransferState(
            transfer_id, reference, provider_reference, webhook_status, bool(confirmed)
        )
        plan.transfers[reference] = state
        if provider_reference:
            plan.by_provider[provider_reference] = state
    by_id = {s.id: s for s in plan.transfers.values()}
    for event_id, name, reference, content_hash, transfer_id, webhook_id in known_events:
        owner = by_id.get(transfer_id)
        if owner is None:  # deleted or racing: let the per-delivery path decide
            raise BatchRaceError("event belongs to a transfer outside the batch")
        key = (name, reference)
        plan.events[key] = (event_id, content_hash, owner)
        if webhook_id:
            plan.by_webhook_id[webhook_id] = key


def _match(plan: _Plan, event: TransferEvent) -> _TransferState | None:
    # Matched by the merchant's reference, else by the provider's (PRODUCT.md: References).
    if event.merchant_reference:
        found = plan.transfers.get(event.merchant_reference) or plan.by_provider.get(
            event.merchant_reference
        )
        if found is not None:
            return found
    return plan.transfers.get(event.reference) or plan.by_provider.get(event.reference)


def _decide(
    plan: _Plan, event: TransferEvent, webhook_id: str | None, now: dt.datetime
) -> tuple[Applied, tuple[str, str]]:
    key = (event.event.value, event.reference)
    if key not in plan.events and webhook_id and webhook_id in plan.by_webhook_id:
        key = plan.by_webhook_id[webhook_id]
    known = plan.events.get(key)
    if known is not None:
        _, content_hash, state = known
        if content_hash == event.content_hash:
            return Applied(DeliveryOutcome.DUPLICATE), key
        applied = Applied(DeliveryOutcome.CONFLICTING)
        plan.findings.append(
            (
                state,
                FindingKind.CONFLICTING_DELIVERY,
                f"{event.event.value} for {event.reference} was delivered again "
                "with different content; the first delivery stays applied",
                applied,
            )
        )
        return applied, key
    applied = Applied(DeliveryOutcome.ACCEPTED)
    matched = _match(plan, event)
    if matched is None:
        state = _TransferState(
            next(plan.transfer_ids),
            event.merchant_reference or event.reference,
            event.reference,
            None,
            False,
            new=True,
        )
        plan.transfers[state.reference] = state
        plan.by_provider[event.reference] = state
        plan.findings.append(
            (
                state,
                FindingKind.ORPHAN_EVENT,
                f"{event.event.value} for {event.reference} (merchant reference "
                f"{event.merchant_reference or 'none'}) that the ledger never "
                "initiated or expected",
                applied,
            )
        )
    else:
        state = matched
    event_id = next(plan.event_ids)
    plan.events[key] = (event_id, event.content_hash, state)
    if webhook_id:
        plan.by_webhook_id[webhook_id] = key
    plan.new_events.append(
        (event_id, key[0], key[1], webhook_id, event.content_hash, event.canonical, state)
    )
    _outcome(plan, state, event, applied, now)
    return applied, key


def _outcome(
    plan: _Plan, state: _TransferState, event: TransferEvent, applied: Applied, now: dt.datetime
) -> None:
    values = state.values
    values["next_check_at"] = now  # a webhook is evidence: the provider must be asked
    values["updated_at"] = now
    if state.provider_reference is None and event.reference not in plan.by_provider:
        state.provider_reference = event.reference
        values["provider_reference"] = event.reference
        plan.by_provider[event.reference] = state
    if state.webhook_status is None:
        state.webhook_status = event.status.value
        values.update(
            webhook_status=event.status.value, webhook_amount=event.amount, webhook_fee=event.fee
        )
        if event.failure_reason is not None:
            values["failure_reason"] = event.failure_reason
        if not state.confirmed:
            values["status"] = event.status.value
    elif state.webhook_status != event.status.value:
        plan.findings.append(
            (
                state,
                FindingKind.STATUS_CONFLICT,
                f"webhooks reported both {state.webhook_status} and "
                f"{event.status.value} for {event.reference}",
                applied,
            )
        )


# The columns each bulk statement writes, with their PostgreSQL types (ledger/models.py).
_NEW_TRANSFER: tuple[Column, ...] = (
    ("id", "bigint"),
    ("reference", "text"),
    ("provider_reference", "text"),
    ("origin", "text"),
    ("status", "text"),
    ("confirmed", "boolean"),
    ("check_attempts", "integer"),
    ("not_found_count", "integer"),
    ("webhook_status", "text"),
    ("webhook_amount", "bigint"),
    ("webhook_fee", "bigint"),
    ("failure_reason", "text"),
    ("next_check_at", "timestamptz"),
    ("created_at", "timestamptz"),
    ("updated_at", "timestamptz"),
)
_NEW_EVENT: tuple[Column, ...] = (
    ("id", "bigint"),
    ("event", "text"),
    ("reference", "text"),
    ("webhook_id", "text"),
    ("content_hash", "text"),
    ("payload", "text"),
    ("transfer_id", "bigint"),
    ("received_at", "timestamptz"),
)
_NEW_FINDING: tuple[Column, ...] = (
    ("transfer_id", "bigint"),
    ("kind", "text"),
    ("detail", "text"),
    ("opened_at", "timestamptz"),
    ("updated_at", "timestamptz"),
)
_NEW_DELIVERY: tuple[Column, ...] = (
    ("received_at", "timestamptz"),
    ("remote_addr", "text"),
    ("headers", "text"),
    ("body", "bytea"),
    ("body_sha256", "text"),
    ("size", "integer"),
    ("outcome", "text"),
    ("error", "text"),
    ("event_type", "text"),
    ("reference", "text"),
    ("webhook_id", "text"),
    ("event_id", "bigint"),
    ("transfer_id", "bigint"),
)


def _write(bulk: Bulk, plan: _Plan, now: dt.datetime) -> list[Statement]:
    """The statements recording the batch's transfers, events and findings, in key order."""
    stamp = bulk.time(now)
    # A new transfer is written whole: its webhook values go into the INSERT itself.
    created = [
        (
            s.id,
            s.reference,
            s.provider_reference,
            TransferOrigin.WEBHOOK.value,
            s.values["status"],
            False,
            0,
            0,
            s.values.get("webhook_status"),
            s.values.get("webhook_amount"),
            s.values.get("webhook_fee"),
            s.values.get("failure_reason"),
            stamp,
            stamp,
            stamp,
        )
        for s in plan.transfers.values()
        if s.new
    ]
    events = [
        (event_id, name, reference, webhook_id, content_hash, payload, state.id, stamp)
        for event_id, name, reference, webhook_id, content_hash, payload, state in (plan.new_events)
    ]
    # A transfer created by this batch has no findings yet, so each of its (transfer, kind)
    # pairs is opened here, once; those of known transfers go through raise_finding.
    opened: dict[tuple[int, str], tuple[Any, ...]] = {}
    for state, kind, detail, applied in plan.findings:
        assert state.id is not None
        key = (state.id, kind.value)
        if state.new and key not in opened:
            opened[key] = (state.id, kind.value, detail, stamp, stamp)
            applied.findings.append(kind)
    return [
        *bulk.insert("transfer", _NEW_TRANSFER, created),
        *bulk.insert("webhook_event", _NEW_EVENT, events),
        *_update_transfers(bulk, [s for s in plan.transfers.values() if s.values and not s.new]),
        *bulk.insert("finding", _NEW_FINDING, list(opened.values())),
    ]


def _raise_known_findings(session: Session, plan: _Plan, now: dt.datetime) -> None:
    """Open (or reopen) the findings on transfers that existed before the batch; rare."""
    for state, kind, detail, applied in plan.findings:
        if state.new:
            continue
        assert state.id is not None
        if raise_finding(session, transfer_id=state.id, kind=kind, detail=detail, now=now):
            applied.findings.append(kind)
    session.flush()


_UPDATABLE: tuple[Column, ...] = (
    ("provider_reference", "text"),
    ("webhook_status", "text"),
    ("webhook_amount", "bigint"),
    ("webhook_fee", "bigint"),
    ("failure_reason", "text"),
    ("status", "text"),
    ("next_check_at", "timestamptz"),
    ("updated_at", "timestamptz"),
)
_TIMES = frozenset({"next_check_at", "updated_at"})


def _update_transfers(bulk: Bulk, states: list[_TransferState]) -> list[Statement]:
    # One executemany per distinct column set (usually one or two).
    groups: dict[tuple[Column, ...], list[list[Any]]] = {}
    for state in states:
        values = state.values
        columns = tuple(c for c in _UPDATABLE if c[0] in values)
        row = [bulk.time(values[n]) if n in _TIMES else values[n] for n, _ in columns]
        row.append(state.id)
        groups.setdefault(columns, []).append(row)
    return [
        statement
        for columns, rows in groups.items()
        for statement in bulk.update("transfer", columns, ("id", "bigint"), rows)
    ]


def _archive(
    bulk: Bulk,
    deliveries: list[IncomingDelivery],
    results: list[Applied],
    event_of: list[tuple[str, str] | None],
    plan: _Plan,
) -> list[Statement]:
    rows = []
    for delivery, applied, key in zip(deliveries, results, event_of, strict=True):
        parsed = delivery.parsed
        if key is not None:
            event_id, _, state = plan.events[key]
            applied.event_id, applied.transfer_id = event_id, state.id
        rows.append(
            (
                bulk.time(delivery.received_at),
                delivery.remote_addr,
                json.dumps(delivery.headers, sort_keys=True),
                delivery.body,
                delivery.body_sha256,
                delivery.size,
                applied.outcome.value,
                delivery.error,
                None if parsed is None else str(parsed.event),
                None if parsed is None else parsed.reference,
                delivery.webhook_id,
                applied.event_id,
                applied.transfer_id,
            )
        )
    return bulk.insert("delivery", _NEW_DELIVERY, rows)
