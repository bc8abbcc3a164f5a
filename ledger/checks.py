"""Provider checks kept: every lookup the reconciler makes, written beside its decision."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import and_, delete, insert, or_, select
from sqlmodel import Session, col

from ledger.events.types import Subject
from ledger.models import ProviderCheck
from ledger.queries import MAX_PAGE, decode_cursor, encode_cursor, iso
from ledger.subjects import BOOK_MODELS, about
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
    subject: Subject  # what was looked up (ledger.subjects)
    subject_id: int
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
    return {
        **asdict(row),
        "subject": row.subject.value,
        "result": row.result.value,
        "error": error,
    }


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
        .where(about(_TABLE.c, Subject.TRANSFER, transfer_id))
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
    settled = [
        and_(
            _TABLE.c.subject == subject.value,
            _TABLE.c.subject_id.in_(
                select(col(model.id)).where(
                    col(model.confirmed).is_(True),
                    col(model.status) != TransferStatus.PENDING.value,
                )
            ),
        )
        for subject, model in BOOK_MODELS.items()
    ]
    doomed = (
        select(col(ProviderCheck.id))
        .where(col(ProviderCheck.checked_at) < cutoff, or_(*settled))
        .limit(batch)
    )
    ids = list(session.execute(doomed).scalars())
    if ids:
        session.execute(delete(ProviderCheck).where(col(ProviderCheck.id).in_(ids)))
    return len(ids)
