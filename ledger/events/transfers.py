"""The events of a transfer's own changes: `transfer.confirmed`, `transfer.reported` and
`transfer.reversed`."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlmodel import Session

from ledger.events import payloads
from ledger.events.outbox import Subscriber, emit
from ledger.events.types import RelayEventType, Subject
from ledger.models import Transfer


def confirmed(
    session: Session,
    transfer: Transfer,
    *,
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> str:
    """Write `transfer.confirmed` about a transfer whose final status the provider's API has
    just confirmed for the first time, as the transfer now stands; its `evt_` id."""
    data = payloads.transfer_confirmed(transfer)
    return _about(session, transfer, RelayEventType.TRANSFER_CONFIRMED, data, now, endpoints)


def reversed_(
    session: Session,
    transfer: Transfer,
    *,
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> str:
    """Write `transfer.reversed` about a confirmed success that came back, as the transfer now
    stands (`ledger.reversals.reverse_transfer` is its one caller); its `evt_` id."""
    data = payloads.transfer_reversed(transfer)
    return _about(session, transfer, RelayEventType.TRANSFER_REVERSED, data, now, endpoints)


def _about(
    session: Session,
    transfer: Transfer,
    type: RelayEventType,
    data: dict[str, Any],
    now: dt.datetime,
    endpoints: list[Subscriber] | None,
) -> str:
    assert transfer.id is not None
    return emit(
        session,
        type=type,
        subject=Subject.TRANSFER,
        subject_id=transfer.id,
        reference=transfer.reference,
        data=data,
        now=now,
        endpoints=endpoints,
    )


def reported(
    session: Session,
    *,
    transfer_id: int,
    reference: str,
    data: dict[str, Any],
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> str:
    """Write `transfer.reported` (`data` from `payloads.transfer_reported`): a webhook's
    outcome the provider's API has not confirmed; its `evt_` id."""
    return emit(
        session,
        type=RelayEventType.TRANSFER_REPORTED,
        subject=Subject.TRANSFER,
        subject_id=transfer_id,
        reference=reference,
        data=data,
        now=now,
        endpoints=endpoints,
    )
