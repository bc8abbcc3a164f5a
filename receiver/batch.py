"""Apply a whole group-commit batch with a handful of set-based statements.

The per-delivery path (`receiver.apply`) issues about ten statements per delivery; here a batch
costs two reads and one bulk write per table, whatever its size. The outcome of every delivery
is decided in Python from the prefetched rows, in arrival order, exactly as the per-delivery
path would decide it. When another process races us for the same transfer or event (an insert
that ON CONFLICT skipped), the batch is abandoned and retried one delivery at a time.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, bindparam, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from ledger.findings import raise_finding
from ledger.models import Delivery, Finding, Transfer, WebhookEvent
from ledger.types import DeliveryOutcome, FindingKind, TransferOrigin
from receiver.apply import Applied, IncomingDelivery
from receiver.events import IgnoredEvent, TransferEvent

_EVENTS = WebhookEvent.__table__  # type: ignore[attr-defined]
_TRANSFERS = Transfer.__table__  # type: ignore[attr-defined]
_DELIVERIES = Delivery.__table__  # type: ignore[attr-defined]
_FINDINGS = Finding.__table__  # type: ignore[attr-defined]


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
    new_events: list[dict[str, Any]] = field(default_factory=list)
    findings: list[tuple[_TransferState, FindingKind, str, Applied]] = field(default_factory=list)


def _insert(connection: Connection, table: Any) -> Any:
    module: Any = postgresql if connection.dialect.name == "postgresql" else sqlite
    return module.insert(table)


def apply_batch(
    session: Session, deliveries: list[IncomingDelivery], *, now: dt.datetime
) -> list[Applied]:
    """Decide, apply and archive every delivery of the batch; never commits."""
    connection = session.connection()
    events = [d.parsed for d in deliveries if isinstance(d.parsed, TransferEvent)]
    plan = _Plan()
    if events:
        _prefetch(connection, plan, events, [d.webhook_id for d in deliveries if d.webhook_id])
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
    _write(connection, session, plan, now)
    _archive(connection, deliveries, results, event_of, plan)
    return results


def _prefetch(
    connection: Connection, plan: _Plan, events: list[TransferEvent], webhook_ids: list[str]
) -> None:
    references = {e.reference for e in events}
    keys = references | {e.merchant_reference for e in events if e.merchant_reference}
    where = _EVENTS.c.reference.in_(references)
    if webhook_ids:
        where = or_(where, _EVENTS.c.webhook_id.in_(webhook_ids))
    # Also the transfers that own events we will meet: a past event may have been matched by
    # a merchant's reference that this batch's deliveries do not carry.
    owners = select(_EVENTS.c.transfer_id).where(where)
    rows = connection.execute(
        select(
            _TRANSFERS.c.id,
            _TRANSFERS.c.reference,
            _TRANSFERS.c.provider_reference,
            _TRANSFERS.c.webhook_status,
            _TRANSFERS.c.confirmed,
        )
        .where(
            or_(
                _TRANSFERS.c.reference.in_(keys),
                _TRANSFERS.c.provider_reference.in_(keys),
                _TRANSFERS.c.id.in_(owners),
            )
        )
        .order_by(_TRANSFERS.c.id)
        .with_for_update()  # PostgreSQL: hold the rows until commit (SQLite locks the file)
    )
    for row in rows:
        state = _TransferState(
            row.id, row.reference, row.provider_reference, row.webhook_status, bool(row.confirmed)
        )
        plan.transfers[state.reference] = state
        if state.provider_reference:
            plan.by_provider[state.provider_reference] = state
    by_id = {s.id: s for s in plan.transfers.values()}
    for event_row in connection.execute(
        select(
            _EVENTS.c.id,
            _EVENTS.c.event,
            _EVENTS.c.reference,
            _EVENTS.c.content_hash,
            _EVENTS.c.transfer_id,
            _EVENTS.c.webhook_id,
        ).where(where)
    ):
        owner = by_id.get(event_row.transfer_id)
        if owner is None:  # deleted or racing: let the per-delivery path decide
            raise BatchRaceError("event belongs to a transfer outside the batch")
        key = (event_row.event, event_row.reference)
        plan.events[key] = (event_row.id, event_row.content_hash, owner)
        if event_row.webhook_id:
            plan.by_webhook_id[event_row.webhook_id] = key


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
            None,
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
    plan.events[key] = (None, event.content_hash, state)
    if webhook_id:
        plan.by_webhook_id[webhook_id] = key
    plan.new_events.append(
        {
            "event": key[0],
            "reference": key[1],
            "webhook_id": webhook_id,
            "content_hash": event.content_hash,
            "payload": event.canonical,
            "received_at": now,
            "_state": state,
        }
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


def _write(connection: Connection, session: Session, plan: _Plan, now: dt.datetime) -> None:
    created = [s for s in plan.transfers.values() if s.new]
    if created:
        rows = [
            {
                "reference": s.reference,
                "provider_reference": s.provider_reference,
                "origin": TransferOrigin.WEBHOOK.value,
                "status": s.values["status"],
                "confirmed": False,
                "check_attempts": 0,
                "not_found_count": 0,
                "created_at": now,
                "updated_at": now,
            }
            for s in created
        ]
        statement = _insert(connection, _TRANSFERS).on_conflict_do_nothing()
        returned = connection.execute(
            statement.returning(_TRANSFERS.c.id, _TRANSFERS.c.reference), rows
        ).all()
        ids = {reference: transfer_id for transfer_id, reference in returned}
        if len(ids) != len(created):
            raise BatchRaceError("a transfer was created concurrently")
        for state in created:
            state.id = ids[state.reference]
    if plan.new_events:
        rows = [
            {**{k: v for k, v in e.items() if k != "_state"}, "transfer_id": e["_state"].id}
            for e in plan.new_events
        ]
        statement = _insert(connection, _EVENTS).on_conflict_do_nothing()
        returned = connection.execute(
            statement.returning(_EVENTS.c.id, _EVENTS.c.event, _EVENTS.c.reference), rows
        ).all()
        if len(returned) != len(rows):
            raise BatchRaceError("an event was recorded concurrently")
        for event_id, name, reference in returned:
            _, content_hash, state = plan.events[(name, reference)]
            plan.events[(name, reference)] = (event_id, content_hash, state)
    updates = [s for s in plan.transfers.values() if s.values and not s.new]
    for state in created:
        state.values.pop("status", None)
        state.values.pop("provider_reference", None)
        updates.append(state)
    _update_transfers(connection, updates)
    _raise_findings(connection, session, plan, now)


def _raise_findings(
    connection: Connection, session: Session, plan: _Plan, now: dt.datetime
) -> None:
    """Open findings in bulk; the rare one that already exists goes through raise_finding."""
    if not plan.findings:
        return
    first: dict[tuple[int, str], dict[str, Any]] = {}
    for state, kind, detail, _ in plan.findings:
        assert state.id is not None
        first.setdefault(
            (state.id, kind.value),
            {
                "transfer_id": state.id,
                "kind": kind.value,
                "detail": detail,
                "opened_at": now,
                "updated_at": now,
            },
        )
    statement = _insert(connection, _FINDINGS).on_conflict_do_nothing()
    opened = {
        (row[0], row[1])
        for row in connection.execute(
            statement.returning(_FINDINGS.c.transfer_id, _FINDINGS.c.kind), list(first.values())
        )
    }
    credited: set[tuple[int, str]] = set()
    for state, kind, detail, applied in plan.findings:
        assert state.id is not None
        key = (state.id, kind.value)
        if key in opened:
            if key not in credited:
                credited.add(key)
                applied.findings.append(kind)
        elif raise_finding(session, transfer_id=state.id, kind=kind, detail=detail, now=now):
            applied.findings.append(kind)
    session.flush()


_UPDATABLE = (
    "provider_reference",
    "webhook_status",
    "webhook_amount",
    "webhook_fee",
    "failure_reason",
    "status",
    "next_check_at",
    "updated_at",
)


def _update_transfers(connection: Connection, states: list[_TransferState]) -> None:
    # One executemany per distinct column set (usually one or two).
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for state in states:
        columns = tuple(c for c in _UPDATABLE if c in state.values)
        if columns:
            groups.setdefault(columns, []).append(
                {"b_id": state.id, **{f"b_{c}": state.values[c] for c in columns}}
            )
    for columns, params in groups.items():
        statement = (
            update(_TRANSFERS)
            .where(_TRANSFERS.c.id == bindparam("b_id"))
            .values({c: bindparam(f"b_{c}") for c in columns})
        )
        connection.execute(statement, params)


def _archive(
    connection: Connection,
    deliveries: list[IncomingDelivery],
    results: list[Applied],
    event_of: list[tuple[str, str] | None],
    plan: _Plan,
) -> None:
    rows = []
    for delivery, applied, key in zip(deliveries, results, event_of, strict=True):
        parsed = delivery.parsed
        if key is not None:
            event_id, _, state = plan.events[key]
            applied.event_id, applied.transfer_id = event_id, state.id
        rows.append(
            {
                "received_at": delivery.received_at,
                "remote_addr": delivery.remote_addr,
                "headers": json.dumps(delivery.headers, sort_keys=True),
                "body": delivery.body,
                "body_sha256": delivery.body_sha256,
                "size": delivery.size,
                "outcome": applied.outcome.value,
                "error": delivery.error,
                "event_type": (
                    parsed.event
                    if isinstance(parsed, IgnoredEvent)
                    else parsed.event.value
                    if parsed is not None
                    else None
                ),
                "reference": parsed.reference if parsed is not None else None,
                "webhook_id": delivery.webhook_id,
                "event_id": applied.event_id,
                "transfer_id": applied.transfer_id,
            }
        )
    connection.execute(insert(_DELIVERIES), rows)
