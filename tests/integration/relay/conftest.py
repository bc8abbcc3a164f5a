"""A real `serve` app with the relay's keys, over the parametrized test database, and a way to
put events, deliveries and attempts in its ledger as the writers and the worker would."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from sqlalchemy import Engine, insert, update

from ledger.db import write_session
from ledger.events import outbox
from ledger.events.types import RelayEventType, Subject
from ledger.models import RelayAttempt, RelayDelivery, Transfer
from ledger.types import TransferOrigin, utcnow
from tests.support.apps import StartReceiver, start_receiver

ADMIN = "admin-token-0123456789"
AUTH = {"authorization": f"Bearer {ADMIN}"}
RELAY_KEYS = "relay-key-0123456789-abcdefghijklmnopq"


__all__ = ["start_receiver"]  # the shared app builder, a fixture for this folder's tests


@pytest.fixture
def relay_url(start_receiver: StartReceiver) -> Iterator[str]:
    """A served app with an admin token and PAYRECON_RELAY_KEYS; yields its base URL."""
    with start_receiver(
        admin_token=ADMIN, relay_keys=RELAY_KEYS, relay_allow_networks="127.0.0.0/8"
    ) as url:
        yield url


@dataclass(frozen=True)
class Seeded:
    """An event written through the outbox: its `evt_` id and its deliveries' row ids."""

    event_id: str
    delivery_ids: list[int]


def add_transfer(engine: Engine, reference: str) -> int:
    """A pending transfer row; its id."""
    with write_session(engine) as session:
        transfer = Transfer(reference=reference, origin=TransferOrigin.EXPECTED.value, amount=100)
        session.add(transfer)
        session.flush()
        assert transfer.id is not None
        return transfer.id


def emit(
    engine: Engine,
    transfer_id: int,
    reference: str,
    *,
    type: RelayEventType = RelayEventType.TRANSFER_CONFIRMED,
    now: dt.datetime | None = None,
) -> Seeded:
    """One event about the transfer, through `ledger.events.outbox.emit` in its own transaction."""
    with write_session(engine) as session:
        event_id = outbox.emit(
            session,
            type=type,
            subject=Subject.TRANSFER,
            subject_id=transfer_id,
            reference=reference,
            data={"reference": reference},
            now=now or utcnow(),
        )
        rows = session.execute(
            outbox.DELIVERIES.select()
            .join(outbox.EVENTS, outbox.EVENTS.c.id == outbox.DELIVERIES.c.event_id)
            .where(outbox.EVENTS.c.event_id == event_id)
            .order_by(outbox.DELIVERIES.c.id)
        ).all()
        return Seeded(event_id, [row.id for row in rows])


def record_attempt(
    engine: Engine, delivery_id: int, *, outcome: str, status_code: int | None = 500
) -> None:
    """An attempt as the worker records it, and the delivery's state after it."""
    now = utcnow()
    status = {"delivered": "delivered", "failed": "failed"}.get(outcome, "pending")
    with write_session(engine) as session:
        session.execute(
            insert(RelayAttempt.__table__).values(  # type: ignore[attr-defined]
                delivery_id=delivery_id,
                attempted_at=now,
                duration_ms=12,
                status_code=status_code,
                error=None if status_code else "connection refused",
                response_head="oops",
                outcome=outcome,
            )
        )
        session.execute(
            update(RelayDelivery.__table__)  # type: ignore[attr-defined]
            .where(RelayDelivery.__table__.c.id == delivery_id)  # type: ignore[attr-defined]
            .values(
                status=status,
                attempts=RelayDelivery.__table__.c.attempts + 1,  # type: ignore[attr-defined]
                next_attempt_at=now + dt.timedelta(hours=1),
                last_status_code=status_code,
                delivered_at=now if status == "delivered" else None,
                updated_at=now,
            )
        )
