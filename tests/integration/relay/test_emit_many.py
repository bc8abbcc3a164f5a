"""Many events written at once (`emit_many`) are the rows `emit` writes one by one."""

from __future__ import annotations

import json

from sqlalchemy import Engine, select

from ledger.db import read_session, write_session
from ledger.events.outbox import NewEvent, emit, emit_many, subscribers
from ledger.events.types import RelayEventType, Subject
from ledger.models import RelayDelivery, RelayEndpoint, RelayEvent
from ledger.types import utcnow
from tests.integration.console.seed import transfer


def test_emit_many_numbers_each_subject_in_order_and_makes_deliveries(engine: Engine) -> None:
    """Events about A, B, A after A's earlier event get sequences 2, 1, 3 (each subject's
    numbers consecutive, in the order given), their bodies carry them, and each gets one
    delivery per subscribed endpoint with the subject's order key."""
    a, b = transfer(engine, "EM-A"), transfer(engine, "EM-B")
    now = utcnow()
    with write_session(engine) as session:
        session.add(RelayEndpoint(url="http://127.0.0.1:9/", secret_sealed="x"))
        session.flush()
        emit(
            session,
            type=RelayEventType.FINDING_OPENED,
            subject=Subject.TRANSFER,
            subject_id=a,
            reference="EM-A",
            data={"n": 0},
            now=now,
        )
        ids = emit_many(
            session,
            [
                NewEvent(
                    RelayEventType.FINDING_ACKNOWLEDGED, Subject.TRANSFER, a, "EM-A", {"n": 1}
                ),
                NewEvent(
                    RelayEventType.FINDING_ACKNOWLEDGED, Subject.TRANSFER, b, "EM-B", {"n": 2}
                ),
                NewEvent(
                    RelayEventType.FINDING_ACKNOWLEDGED, Subject.TRANSFER, a, "EM-A", {"n": 3}
                ),
            ],
            now=now,
            endpoints=subscribers(session),
        )
    with read_session(engine) as session:
        events = {e.event_id: e for e in session.execute(select(RelayEvent)).scalars()}
        deliveries = list(session.execute(select(RelayDelivery)).scalars())
    got = [(events[i].reference, events[i].sequence, json.loads(events[i].body)) for i in ids]
    assert [(r, s) for r, s, _ in got] == [("EM-A", 2), ("EM-B", 1), ("EM-A", 3)]
    assert [(b["sequence"], b["data"]["n"], b["id"]) for _, _, b in got] == [
        (2, 1, ids[0]),
        (1, 2, ids[1]),
        (3, 3, ids[2]),
    ]
    by_event = {d.event_id: d for d in deliveries}
    for event_id in ids:
        delivery = by_event[events[event_id].id or 0]
        assert (delivery.subject_key, delivery.sequence) == (
            f"transfer:{events[event_id].reference}",
            events[event_id].sequence,
        )
