"""Provider checks kept: every lookup the reconciler makes, written beside its decision."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import delete, insert, or_, select
from sqlmodel import Session, col

from ledger.models import Collection, ProviderCheck, Transfer
from ledger.queries import MAX_PAGE, decode_cursor, encode_cursor, iso
from ledger.types import TransferStatus, storable_text

CURSOR_KIND = "c"
DEFAULT_KEEP_DAYS = 400
_TABLE = ProviderCheck.__table__  # type: ignore[attr-defined]


class CheckResult(enum.StrEnum):
    """What a lookup got."""

    FOUND = "found"
    NOT_FOUND = "not_found"
    TRANSIENT = "transient"  # 5xx, timeout, 429, or an answer not from the provider
    UNINTERPRETABLE = "uninterpretable"


@dataclass(frozen=True)
class CheckRow:
    """One lookup as the reconciler saw it (before it is a row)."""

    checked_at: dt.datetime
    http_status: int | None
    result: CheckResult
    transfer_id: int | None = None  # the subject: a transfer or a collection
    collection_id: int | None = None
    provider_status: str | None = None
    amount: int | None = None
    fee: int | None = None
    error: str | None = None


def record_checks(session: Session, rows: Sequence[CheckRow]) -> None:
    """Insert a chunk's checks in one statement (executemany), in the caller's transaction."""
    if rows:
        session.execute(insert(_TABLE), [_values(row) for row in rows])


# An error is the provider's words or an exception's: kept readable, never a whole body.
MAX_ERROR_CHARS = 1000


def _values(row: CheckRow) -> dict[str, Any]:
    error = None if row.error is None else storable_text(row.error)[:MAX_ERROR_CHARS]
    return {**asdict(row), "result": row.result.value, "error": error}


def check_dict(check: ProviderCheck) -> dict[str, Any]:
    """A check as the API shows it (amounts in kobo)."""
    return {
        "id": check.id,
        "checked_at": iso(check.checked_at),
        "http_status": check.http_status,
        "result": check.result,
        "provider_status": check.provider_status,
        "amount": check.amount,
        "fee": check.fee,
        "error": check.error,
    }


@dataclass(frozen=True)
class CheckPage:
    """One page of a transfer's checks, newest first, and the next page's cursor."""

    items: list[ProviderCheck]
    next_cursor: str | None


def list_checks(
    session: Session, *, transfer_id: int, limit: int = 50, cursor: str | None = None
) -> CheckPage:
    """A transfer's checks newest first, keyset-paginated by id."""
    limit = max(1, min(limit, MAX_PAGE))
    statement = (
        select(ProviderCheck)
        .where(col(ProviderCheck.transfer_id) == transfer_id)
        .order_by(col(ProviderCheck.id).desc())
    )
    if cursor is not None:
        statement = statement.where(col(ProviderCheck.id) < decode_cursor(cursor, kind=CURSOR_KIND))
    rows = list(session.execute(statement.limit(limit + 1)).scalars())
    more = len(rows) > limit
    rows = rows[:limit]
    last = rows[-1].id if rows and more else None
    return CheckPage(rows, None if last is None else encode_cursor(last, kind=CURSOR_KIND))


def prune_checks(session: Session, *, keep_days: int, now: dt.datetime, batch: int = 10_000) -> int:
    """Delete up to `batch` checks older than `keep_days` of settled transfers and
    collections; how many.

    Only settled ones (confirmed by the provider with a final status) lose their history: a
    pending or disputed transfer or collection keeps every check until it settles.
    """
    cutoff = now - dt.timedelta(days=keep_days)
    settled_transfers = select(col(Transfer.id)).where(
        col(Transfer.confirmed).is_(True), col(Transfer.status) != TransferStatus.PENDING.value
    )
    settled_collections = select(col(Collection.id)).where(
        col(Collection.confirmed).is_(True),
        col(Collection.status) != TransferStatus.PENDING.value,
    )
    doomed = (
        select(col(ProviderCheck.id))
        .where(
            col(ProviderCheck.checked_at) < cutoff,
            or_(
                col(ProviderCheck.transfer_id).in_(settled_transfers),
                col(ProviderCheck.collection_id).in_(settled_collections),
            ),
        )
        .limit(batch)
    )
    ids = list(session.execute(doomed).scalars())
    if ids:
        session.execute(delete(ProviderCheck).where(col(ProviderCheck.id).in_(ids)))
    return len(ids)
