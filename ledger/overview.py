"""The console's overview figures: open findings by kind, stale pending, relay, today."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlmodel import Session, col

from ledger.events.types import DeliveryStatus
from ledger.models import Finding, RelayDelivery, RelayEndpoint, Transfer
from ledger.types import TransferStatus


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
    today = {
        str(status): StatusFigures(int(count), int(amount or 0), int(fee or 0))
        for status, count, amount, fee in session.execute(
            select(
                col(Transfer.status),
                func.count(),
                func.sum(col(Transfer.amount)),
                func.sum(func.coalesce(col(Transfer.provider_fee), col(Transfer.fee))),
            )
            .where(col(Transfer.created_at) >= day_start)
            .group_by(col(Transfer.status))
        ).all()
    }
    return Overview(by_kind, acknowledged, int(stale), _endpoints(session), today)
