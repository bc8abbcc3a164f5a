"""The set-based batch path decides exactly as the per-delivery path, whatever the sequence,
relay events and their deliveries included."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select

from ledger.db import create_db_engine, read_session, write_session
from ledger.events.types import RelayEventType
from ledger.models import Delivery, Finding, RelayDelivery, RelayEvent, Transfer, WebhookEvent
from ledger.queries import ExpectedTransfer, find_transfer, register_expected
from ledger.types import utcnow
from receiver.apply import IncomingDelivery, apply_delivery
from receiver.batch import apply_batch
from receiver.events import parse_event
from relay import endpoints
from relay.keys import SecretBox
from tests.support.relay import LOOPBACK

REFERENCES = ["A", "B", "C"]
event_bodies = st.builds(
    lambda kind, ref, amount, with_merchant: {
        "event": kind,
        "data": {
            "reference": f"TRF_{ref}",
            **({"merchant_reference": f"m-{ref}"} if with_merchant else {}),
            "status": "successful" if kind == "transfer.success" else "failed",
            **(
                {"amount": amount, "fee": 100}
                if kind == "transfer.success"
                else {"failure_reason": "x"}
            ),
        },
    },
    st.sampled_from(["transfer.success", "transfer.failed", "transfer.reversed"]),
    st.sampled_from(REFERENCES),
    st.sampled_from([1000, 2000]),
    st.booleans(),
)
# A body and the Standard Webhooks id it came with (a repeat may reuse an id).
deliveries = st.tuples(event_bodies, st.sampled_from([None, None, "msg_1", "msg_2"]))


def _delivery(item: tuple[dict[str, Any], str | None]) -> IncomingDelivery:
    body, webhook_id = item
    raw = json.dumps(body).encode()
    delivery = IncomingDelivery(
        utcnow(),
        "127.0.0.1",
        {},
        raw,
        hashlib.sha256(raw).hexdigest(),
        len(raw),
        webhook_id=webhook_id,
    )
    delivery.parsed = parse_event(raw)
    return delivery


def _snapshot(engine: Engine) -> tuple[Any, ...]:
    # Ids differ between the two ledgers, so rows are compared through transfer references.
    with read_session(engine) as session:
        reference_of = {t.id: t.reference for t in session.execute(select(Transfer)).scalars()}
        transfers = sorted(
            (
                t.reference,
                t.provider_reference,
                t.origin,
                t.status,
                t.confirmed,
                t.webhook_status,
                t.webhook_amount,
                t.webhook_fee,
                t.failure_reason,
                t.next_check_at is not None,
            )
            for t in session.execute(select(Transfer)).scalars()
        )
        events = {
            e.id: (e.event, e.reference, e.content_hash, e.payload, reference_of[e.transfer_id])
            for e in session.execute(select(WebhookEvent)).scalars()
        }
        findings = sorted(
            (reference_of[f.subject_id], f.kind, f.resolved_at is None)
            for f in session.execute(select(Finding)).scalars()
        )
        deliveries = [
            (
                d.outcome,
                d.event_type,
                d.reference,
                d.body,
                d.size,
                reference_of.get(d.transfer_id),
                events.get(d.event_id),
            )
            for d in session.execute(select(Delivery).order_by(Delivery.id)).scalars()
        ]
        relay_events = _relay_events(session, reference_of)
    return transfers, sorted(events.values()), findings, deliveries, relay_events


# The keys of relay event data that differ between two ledgers: row ids and times.
_VOLATILE = {"id", "opened_at", "resolved_at", "acknowledged_at"}


def _relay_events(session: Any, reference_of: dict[Any, str]) -> list[tuple[Any, ...]]:
    """Each relay event as (subject, sequence, type, data without ids and times, endpoints
    with a pending delivery), in subject and sequence order."""
    endpoints_of: dict[int, list[int]] = {}
    for delivery in session.execute(select(RelayDelivery)).scalars():
        assert delivery.status == "pending"
        endpoints_of.setdefault(delivery.event_id, []).append(delivery.endpoint_id)
    rows = []
    for event in session.execute(select(RelayEvent)).scalars():
        body = json.loads(event.body)
        assert body["sequence"] == event.sequence and body["type"] == event.type
        data = {k: v for k, v in body["data"].items() if k not in _VOLATILE}
        rows.append(
            (
                reference_of[event.subject_id],
                event.sequence,
                event.type,
                data,
                sorted(endpoints_of.get(event.id, [])),
            )
        )
    rows.sort(key=lambda row: (row[0], row[1]))
    return rows


def _seed(engine: Engine) -> None:
    # One transfer the ledger expects, so matching by merchant reference is exercised too, and
    # endpoints taking the default types, every type, and only transfer.reported.
    box = SecretBox(["x" * 32])
    with write_session(engine) as session:
        register_expected(session, ExpectedTransfer("m-A", 1000, 100), now=utcnow())
        # Confirmed successes (PRODUCT.md: Reversals): a failure reported after them is
        # reversal evidence, with (m-B) or without (m-C) a success webhook before it.
        for reference, webhook in (("m-B", "successful"), ("m-C", None)):
            register_expected(session, ExpectedTransfer(reference, 1000, 100), now=utcnow())
            confirmed = find_transfer(session, reference, for_update=True)
            assert confirmed is not None
            confirmed.status, confirmed.confirmed = "successful", True
            confirmed.webhook_status = webhook
            confirmed.confirmed_at = confirmed.updated_at = utcnow()
        now = utcnow()
        endpoints.add(session, box, url="http://127.0.0.1:9/default", now=now, allow=LOOPBACK)
        every = ",".join(t.value for t in RelayEventType)
        endpoints.add(
            session, box, url="http://127.0.0.1:9/every", types=every, now=now, allow=LOOPBACK
        )
        endpoints.add(
            session,
            box,
            url="http://127.0.0.1:9/reported",
            types="transfer.reported",
            now=now,
            allow=LOOPBACK,
        )


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    bodies=st.lists(deliveries, min_size=1, max_size=12),
    cuts=st.lists(st.integers(1, 5), max_size=6),
)
def test_batches_and_single_deliveries_reach_the_same_ledger(
    request: pytest.FixtureRequest,
    backend: str,
    bodies: list[tuple[dict[str, Any], str | None]],
    cuts: list[int],
) -> None:
    """Applying a sequence in batches of any size gives the same state as one by one, and the
    same relay events (type, subject, sequence, data) with the same deliveries, confirmed
    successes receiving reversal evidence included."""
    factory = request.getfixturevalue(f"{backend}_factory")
    engines = [create_db_engine(factory.new()), create_db_engine(factory.new())]
    try:
        single, batched = engines
        _seed(single)
        _seed(batched)
        for body in bodies:
            with write_session(single) as session:
                apply_delivery(session, _delivery(body), now=utcnow())
        start = 0
        for size in [*cuts, len(bodies)]:
            chunk = bodies[start : start + size]
            if chunk:
                with write_session(batched) as session:
                    apply_batch(session, [_delivery(b) for b in chunk], now=utcnow())
            start += size
        assert _snapshot(batched) == _snapshot(single)
    finally:
        for engine in engines:
            engine.dispose()
