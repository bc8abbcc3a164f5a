"""`relay replay`: queue events again, with their ids, as new pending deliveries.

Each matching event gets one new delivery per matching endpoint (enabled, not removed, takes
the type; or the one `--endpoint`), due now; one that is still pending there is left alone.
`failed_only` takes only the (event, endpoint) pairs whose delivery failed for good.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import and_, exists, insert, select
from sqlmodel import Session

from ledger.events.outbox import (
    DELIVERIES,
    EVENTS,
    Subscriber,
    delivery_rows,
    subject_key,
    subscribers,
    wake_workers,
)
from ledger.events.types import DeliveryStatus, RelayEventType, parse_types
from relay import endpoints as endpoint_ops


def queue_again(
    session: Session,
    *,
    now: dt.datetime,
    endpoint_id: int | None = None,
    type: RelayEventType | None = None,
    since: dt.datetime | None = None,
    failed_only: bool = False,
) -> int:
    """Queue the matching events again; how many deliveries were queued.

    EndpointNotFoundError when `endpoint_id` names no endpoint.
    """
    if endpoint_id is not None:
        endpoint = endpoint_ops.get(session, endpoint_id)
        targets = [Subscriber(endpoint_id, parse_types(endpoint.event_types))]
    else:
        targets = subscribers(session)
    queued = 0
    for target in targets:
        statement = select(
            EVENTS.c.id, EVENTS.c.type, EVENTS.c.subject, EVENTS.c.reference, EVENTS.c.sequence
        ).order_by(EVENTS.c.id)
        if type is not None:
            statement = statement.where(EVENTS.c.type == type.value)
        if since is not None:
            statement = statement.where(EVENTS.c.created_at >= since)
        mine = and_(DELIVERIES.c.event_id == EVENTS.c.id, DELIVERIES.c.endpoint_id == target.id)
        if failed_only:
            statement = statement.where(
                exists().where(mine, DELIVERIES.c.status == DeliveryStatus.FAILED.value)
            )
        statement = statement.where(
            ~exists().where(mine, DELIVERIES.c.status == DeliveryStatus.PENDING.value)
        )
        rows = []
        for event in session.execute(statement):
            if RelayEventType(event.type) not in target.types:
                continue
            rows += delivery_rows(
                event.id,
                [target.id],
                key=subject_key(event.subject, event.reference),
                sequence=event.sequence,
                now=now,
            )
        if rows:
            session.execute(insert(DELIVERIES), rows)
            queued += len(rows)
    if queued:
        wake_workers(session)
    return queued
