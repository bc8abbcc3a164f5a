"""The event of a collection's own change: `collection.confirmed`."""

from __future__ import annotations

import datetime as dt

from sqlmodel import Session

from ledger.events import payloads
from ledger.events.outbox import Subscriber, emit
from ledger.events.types import RelayEventType, Subject
from ledger.models import Collection


def confirmed(
    session: Session,
    collection: Collection,
    *,
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> str:
    """Write `collection.confirmed` about a collection whose final status the provider's API
    has just confirmed, as the collection now stands; its `evt_` id."""
    assert collection.id is not None
    return emit(
        session,
        type=RelayEventType.COLLECTION_CONFIRMED,
        subject=Subject.COLLECTION,
        subject_id=collection.id,
        reference=collection.reference,
        data=payloads.collection_confirmed(collection),
        now=now,
        endpoints=endpoints,
    )
