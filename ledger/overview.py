"""The console's overview figures: open findings by kind, stale pending, relay, today."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session, col

from ledger.events.types import DeliveryStatus
from ledger.figures import (
    collection_amount_sql,
    collection_fee_sql,
    transfer_amount_sql,
    transfer_fee_sql,
)
from ledger.models import Collection, Finding, RelayDelivery, RelayEndpoint, Transfer
from ledger.types import TransferStatus

Figure = Callable[[Any], Any]  # a `ledger.figures` SQL builder
_TRANSFERS = Transfer.__table__.c  # type: ignore[attr-defined]
_COLLECTIONS = Collection.__table__.c  # type: ignore[attr-defined]


@dataclass(frozen=True)
class StatusFigures:
    """Count, amount and fee (kobo) of transfers of one status."""

    count: int = 0
    amount: int = 0
    fee: int = 0


@dataclass(frozen=True)
class EndpointHealth:
    """One relay endpoint as the overview shows it."""

    id: int
    url: str
    enabled: bool
    pending: int
    failed: int
    last_success_at: dt.datetime | None
    failing_since: dt.datetime | None


@dataclass(frozen=True)
class Overview:
    """What `/console` shows."""

    open_by_kind: dict[str, int]
    acknowledged: int
    stale_pending: int
    endpoints: list[EndpointHealth]
    today: dict[str, StatusFigures] = field(default_factory=dict)
    collections_today: dict[str, StatusFigures] = field(default_factory=dict)

    @property
    def open_total(self) -> int:
        """Every open finding."""
        return sum(self.open_by_kind.values())


def _findings(session: Session) -> tuple[dict[str, int], int]:
    unresolved = col(Finding.resolved_at).is_(None)
    rows = session.execute(
        select(col(Finding.kind), func.count())
        .where(unresolved, col(Finding.acknowledged_at).is_(None))
        .group_by(col(Finding.kind))
        .order_by(col(Finding.kind))
    ).all()
    acknowledged = session.execute(
        select(func.count())
        .select_from(Finding)
        .where(unresolved, col(Finding.acknowledged_at).is_not(None))
    ).scalar_one()
    return {str(kind): int(count) for kind, count in rows}, int(acknowledged)


def _endpoints(session: Session) -> list[EndpointHealth]:
    endpoints = list(
        session.execute(
            select(RelayEndpoint)
            .where(col(RelayEndpoint.removed_at).is_(None))
            .order_by(col(RelayEndpoint.id))
        ).scalars()
    )
    counts: dict[tuple[int, str], int] = {}
    if endpoints:
        for endpoint_id, status, count in session.execute(
            select(col(RelayDelivery.endpoint_id), col(RelayDelivery.status), func.count())
            .where(
                col(RelayDelivery.endpoint_id).in_([e.id for e in endpoints]),
                col(RelayDelivery.status).in_(
                    [DeliveryStatus.PENDING.value, DeliveryStatus.FAILED.value]
                ),
            )
            .group_by(col(RelayDelivery.endpoint_id), col(RelayDelivery.status))
        ).all():
            counts[(int(endpoint_id), str(status))] = int(count)
    return [
        EndpointHealth(
            id=e.id or 0,
            url=e.url,
            enabled=e.enabled,
            pending=counts.get((e.id or 0, DeliveryStatus.PENDING.value), 0),
            failed=counts.get((e.id or 0, DeliveryStatus.FAILED.value), 0),
            last_success_at=e.last_success_at,
            failing_since=e.failing_since,
        )
        for e in endpoints
    ]


def overview(
    session: Session, *, day_start: dt.datetime, now: dt.datetime, stale_after: int
) -> Overview:
    """The overview as of `now`; "today" is the transfers created since `day_start`."""
    by_kind, acknowledged = _findings(session)
    stale = session.execute(
        select(func.count())
        .select_from(Transfer)
        .where(
            col(Transfer.status) == TransferStatus.PENDING.value,
            col(Transfer.created_at) < now - dt.timedelta(seconds=stale_after),
        )
    ).scalar_one()
    today = _by_status(session, _TRANSFERS, transfer_amount_sql, transfer_fee_sql, day_start)
    collections = _by_status(
        session, _COLLECTIONS, collection_amount_sql, collection_fee_sql, day_start
    )
    return Overview(by_kind, acknowledged, int(stale), _endpoints(session), today, collections)


def _by_status(
    session: Session, columns: Any, amount: Figure, fee: Figure, day_start: dt.datetime
) -> dict[str, StatusFigures]:
    # The reports' figure rule (ledger.figures), so the overview's today is the report's today.
    return {
        str(status): StatusFigures(int(count), int(total or 0), int(fees or 0))
        for status, count, total, fees in session.execute(
            select(columns.status, func.count(), func.sum(amount(columns)), func.sum(fee(columns)))
            .where(columns.created_at >= day_start)
            .group_by(columns.status)
        ).all()
    }
