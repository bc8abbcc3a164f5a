"""Helpers for the outbox writers' tests: endpoints of every kind, and the events written."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select

from ledger.db import read_session, write_session
from ledger.models import RelayDelivery, RelayEvent
from ledger.types import utcnow
from receiver.apply import IncomingDelivery
from receiver.events import parse_event
from relay import endpoints
from relay.keys import SecretBox
from tests.support.relay import LOOPBACK

BOX = SecretBox(["x" * 32])


@dataclass(frozen=True)
class Endpoints:
    """The ids of one endpoint of each kind."""

    default: int  # no types listed: every type but transfer.reported
    reported: int  # transfer.reported only
    disabled: int
    removed: int


def add_endpoints(engine: Engine) -> Endpoints:
    """An endpoint of each kind; only `default` and `reported` take new events."""
    now = utcnow()
    with write_session(engine) as session:
        ids = [
            endpoints.add(
                session,
                BOX,
                url=f"http://127.0.0.1:9/{name}",
                types=types,
                now=now,
                allow=LOOPBACK,
            )[0].id
            for name, types in [
                ("default", None),
                ("reported", "transfer.reported"),
                ("disabled", None),
                ("removed", None),
            ]
        ]
        assert all(i is not None for i in ids)
        endpoints.set_enabled(session, ids[2] or 0, False, now=now)
        endpoints.remove(session, ids[3] or 0, now=now)
    return Endpoints(*(int(i or 0) for i in ids))


@dataclass(frozen=True)
class Written:
    """A relay event as stored, with the endpoints it has a pending delivery for."""

    type: str
    reference: str | None
    sequence: int
    data: dict[str, Any]
    endpoints: list[int]


def written(engine: Engine) -> list[Written]:
    """Every relay event in id order; checks each body against its row."""
    with read_session(engine) as session:
        targets: dict[int, list[int]] = {}
        for delivery in session.execute(select(RelayDelivery)).scalars():
            assert delivery.status == "pending" and delivery.attempts == 0
            targets.setdefault(delivery.event_id, []).append(delivery.endpoint_id)
        found = []
        for event in session.execute(select(RelayEvent).order_by(RelayEvent.id)).scalars():  # type: ignore[arg-type]
            body = json.loads(event.body)
            assert body["id"] == event.event_id and event.event_id.startswith("evt_")
            assert (body["type"], body["sequence"]) == (event.type, event.sequence)
            found.append(
                Written(
                    event.type,
                    event.reference,
                    event.sequence,
                    body["data"],
                    sorted(targets.get(event.id or 0, [])),
                )
            )
    return found


def webhook(
    kind: str, reference: str, *, merchant_reference: str | None = None, amount: int = 100_000
) -> IncomingDelivery:
    """A parsed delivery of a provider webhook, as the receiver hands it to the writers."""
    data: dict[str, Any] = {"reference": reference, "amount": amount, "fee": 1000}
    if merchant_reference is not None:
        data["merchant_reference"] = merchant_reference
    if kind == "transfer.success":
        data["status"] = "successful"
    else:
        data.update(status="failed", failure_reason="Insufficient funds")
    raw = json.dumps({"event": kind, "data": data}).encode()
    delivery = IncomingDelivery(
        utcnow(), "127.0.0.1", {}, raw, hashlib.sha256(raw).hexdigest(), len(raw)
    )
    delivery.parsed = parse_event(raw)
    return delivery
