"""`payrecon replay` rebuilds the same transfer state from the archived deliveries."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import Engine, delete, select, update

from ledger.db import read_session, write_session
from ledger.models import Delivery, Transfer, WebhookEvent
from ledger.types import utcnow
from receiver.replay import replay
from tests.support.apps import StartReceiver
from tests.support.webhooks import encode, failed_body, success_body

COLUMNS = (
    "reference",
    "provider_reference",
    "status",
    "webhook_status",
    "webhook_amount",
    "webhook_fee",
    "failure_reason",
    "confirmed",
)


def _state(engine: Engine) -> list[tuple[Any, ...]]:
    with read_session(engine) as session:
        rows = session.execute(select(Transfer).order_by(Transfer.reference)).scalars().all()
        return [tuple(getattr(row, c) for c in COLUMNS) for row in rows]


def test_replay_yields_the_state_live_ingest_built(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """After wiping the webhook evidence and the events, replay restores the same state."""
    bodies = [
        success_body("R1", amount=100),
        success_body("R1", amount=100),
        failed_body("R2"),
        success_body("R2"),
        success_body("R3", amount=7),
        success_body("R3", amount=8),
        failed_body("R4", reason="Dormant account"),
    ]
    with start_receiver() as url:
        for body in bodies:
            httpx.post(
                f"{url}/webhook", content=encode(body), headers={"content-type": "application/json"}
            )
    before = _state(engine)
    with write_session(engine) as session:
        session.execute(update(Delivery).values(event_id=None))
        session.execute(delete(WebhookEvent))
        session.execute(
            update(Transfer).values(
                webhook_status=None,
                webhook_amount=None,
                webhook_fee=None,
                status="pending",
                failure_reason=None,
            )
        )
    assert _state(engine) != before
    with write_session(engine) as session:
        summary = replay(session, since=None, now=utcnow())
    assert summary.deliveries == len(bodies)
    assert summary.recreated == 5  # five logical events: one duplicate and one conflicting copy
    assert _state(engine) == before
    with write_session(engine) as session:
        again = replay(session, since=None, now=utcnow())
    assert again.reapplied == 5 and again.recreated == 0
    assert _state(engine) == before


def test_replay_leaves_confirmed_transfers_when_they_were_due(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """A replay makes unconfirmed transfers due at once, never one the provider confirmed:
    its deliveries are not news, and a provider that lost its records must not be asked."""
    with start_receiver() as url:
        for body in (success_body("R1", amount=100), failed_body("R2"), success_body("R3")):
            httpx.post(
                f"{url}/webhook", content=encode(body), headers={"content-type": "application/json"}
            )
    settled = utcnow()
    with write_session(engine) as session:
        # What the reconciler leaves behind: R1 and R2 confirmed, nothing more to look up.
        session.execute(
            update(Transfer)
            .where(Transfer.provider_reference.in_(["R1", "R2"]))  # type: ignore[attr-defined]
            .values(confirmed=True, confirmed_at=settled, next_check_at=None)
        )
        session.execute(
            update(Transfer)
            .where(Transfer.provider_reference == "R3")  # type: ignore[arg-type]
            .values(next_check_at=None)
        )
    before = _state(engine)
    replayed_at = utcnow()
    with write_session(engine) as session:
        summary = replay(session, since=None, now=replayed_at)
    with read_session(engine) as session:
        rows = session.execute(select(Transfer.provider_reference, Transfer.next_check_at))
        due = dict(rows.all())
    assert summary.reapplied == 3
    assert due["R1"] is None and due["R2"] is None
    assert due["R3"] is not None and due["R3"] >= replayed_at
    assert _state(engine) == before
