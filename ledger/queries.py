"""Reads and small writes over transfers shared by the receiver, the CLI and the reconciler."""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, exists, func, select
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session, col

from ledger.errors import ConflictError
from ledger.events.types import Subject
from ledger.finding_record import findings_of
from ledger.models import Delivery, Finding, Transfer
from ledger.money import whole_number_from_text
from ledger.reference_search import either_reference
from ledger.subjects import about, checkable_row, find_by_reference
from ledger.types import TransferOrigin, TransferStatus
from ledger.upsert import insert_ignore

MAX_PAGE = 500
# Row ids are signed 64-bit on both databases; a larger number in a cursor cannot be bound.
MAX_ROW_ID = 2**63 - 1


def find_transfer(session: Session, reference: str, *, for_update: bool = False) -> Transfer | None:
    """The transfer whose merchant's or provider's reference is `reference` (the merchant's
    wins: `ledger.subjects.find_by_reference`)."""
    return find_by_reference(session, Transfer, reference, for_update=for_update)


def transfer_record(session: Session, transfer: Transfer) -> dict[str, Any]:
    """The transfer as `GET /api/transfers/{reference}` answers it."""
    deliveries = session.execute(
        select(func.count()).select_from(Delivery).where(Delivery.transfer_id == transfer.id)  # type: ignore[arg-type]
    ).scalar_one()
    return {
        "reference": transfer.reference,
        "provider_reference": transfer.provider_reference,
        "origin": transfer.origin,
        "status": transfer.status,
        "confirmed": transfer.confirmed,
        "amount": transfer.amount,
        "fee": transfer.fee,
        "provider_amount": transfer.provider_amount,
        "provider_fee": transfer.provider_fee,
        "provider_status": transfer.provider_status,
        "webhook_amount": transfer.webhook_amount,
        "webhook_fee": transfer.webhook_fee,
        "webhook_status": transfer.webhook_status,
        "failure_reason": transfer.failure_reason,
        "bank_code": transfer.bank_code,
        "account_number": transfer.account_number,
        "account_name": transfer.account_name,
        "initiation": transfer.initiation,
        "next_check_at": iso(transfer.next_check_at),
        "created_at": iso(transfer.created_at),
        "updated_at": iso(transfer.updated_at),
        "confirmed_at": iso(transfer.confirmed_at),
        # docs/rules.md: Reversals (null unless a confirmed success came back).
        "reversed_at": iso(transfer.reversed_at),
        "reversal_reason": transfer.reversal_reason,
        "reversal_source": transfer.reversal_source,
        "findings": findings_of(session, transfer),
        "deliveries": deliveries,
    }


@dataclass(frozen=True)
class TransferPage:
    """One page of transfers and the cursor of the next page (None at the end)."""

    items: list[Transfer]
    next_cursor: str | None


def encode_cursor(row_id: int, *, kind: str = "t") -> str:
    """An opaque cursor for keyset pagination over the rows of one `kind` (`t`: transfers)."""
    return base64.urlsafe_b64encode(f"{kind}:{row_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str, *, kind: str = "t") -> int:
    """The row id inside a cursor of `kind`; ValueError when it is not one of ours."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("invalid cursor") from exc
    prefix, _, number = text.partition(":")
    if prefix != kind:
        raise ValueError("invalid cursor")
    # A NumberInputError (a ValueError) for "t:²", "t:-1" or an id past 2^63-1.
    return whole_number_from_text(number, minimum=0, maximum=MAX_ROW_ID)


# The `finding` filter that keeps transfers with an open finding of any kind.
ANY_FINDING = "any"


def list_transfers(
    session: Session,
    *,
    status: TransferStatus | None = None,
    finding: str | None = None,
    since: dt.datetime | None = None,
    limit: int = 50,
    cursor: str | None = None,
    until: dt.datetime | None = None,
    reference: str | None = None,
) -> TransferPage:
    """Transfers newest first, filtered (`reference`: a prefix of either reference, a
    `ledger.reference_search.search_key`); keyset-paginated by id so pages never shift."""
    statement = select(Transfer)
    if reference:
        statement = statement.where(either_reference(Transfer, reference))
    if status is not None:
        statement = statement.where(Transfer.status == status.value)  # type: ignore[arg-type]
    if since is not None:
        statement = statement.where(col(Transfer.created_at) >= since)
    if until is not None:
        statement = statement.where(col(Transfer.created_at) < until)
    if finding is not None:
        statement = statement.where(with_open_finding(Subject.TRANSFER, col(Transfer.id), finding))
    items, next_cursor = keyset_page(session, statement, Transfer, limit=limit, cursor=cursor)
    return TransferPage(items, next_cursor)


def with_open_finding(subject: Subject, row_id: Any, finding: str) -> ColumnElement[bool]:
    """Rows (of `subject`, whose id is `row_id`) holding an open finding of kind `finding`,
    or of any kind for ANY_FINDING."""
    owner = about(Finding.__table__.c, subject, row_id)  # type: ignore[attr-defined]
    conditions = [owner, col(Finding.resolved_at).is_(None)]
    if finding != ANY_FINDING:
        conditions.append(col(Finding.kind) == finding)
    return exists().where(*conditions)


def keyset_page(
    session: Session,
    statement: Select[Any],
    model: Any,
    *,
    limit: int,
    cursor: str | None,
    kind: str = "t",
) -> tuple[list[Any], str | None]:
    """One page of `statement`'s rows of `model`, newest id first, and the cursor (of `kind`)
    of the next page (None at the end); pages never shift when rows are added."""
    limit = max(1, min(limit, MAX_PAGE))
    statement = statement.order_by(col(model.id).desc())
    if cursor is not None:
        statement = statement.where(col(model.id) < decode_cursor(cursor, kind=kind))
    rows = list(session.execute(statement.limit(limit + 1)).scalars())
    more = len(rows) > limit
    rows = rows[:limit]
    last_id = rows[-1].id if rows else None
    return rows, encode_cursor(last_id, kind=kind) if more and last_id is not None else None


@dataclass(frozen=True)
class ExpectedTransfer:
    """A transfer initiated outside payrecon that the ledger should expect."""

    reference: str
    amount: int
    fee: int | None = None
    provider_reference: str | None = None


def expected_transfer_row(expected: ExpectedTransfer, now: dt.datetime) -> dict[str, Any]:
    """The new `transfer` row of a registration (one rule for one registration and for the
    batched import, `payrecon.csvimport`)."""
    return checkable_row(
        now=now,
        next_check_at=now,  # newly registered: due at once
        reference=expected.reference,
        provider_reference=expected.provider_reference,
        origin=TransferOrigin.EXPECTED.value,
        amount=expected.amount,
        fee=expected.fee,
    )


def register_expected(
    session: Session, expected: ExpectedTransfer, *, now: dt.datetime
) -> tuple[Transfer, bool]:
    """Record an expected transfer; (transfer, created). ConflictError when it differs."""
    existing = find_transfer(session, expected.reference, for_update=True)
    if existing is None and expected.provider_reference:
        existing = find_transfer(session, expected.provider_reference, for_update=True)
    if existing is None:
        new_id = insert_ignore(
            session,
            Transfer.__table__,  # type: ignore[attr-defined]
            expected_transfer_row(expected, now),
        )
        if new_id is not None:
            created = session.get(Transfer, new_id)
            assert created is not None
            return created, True
        existing = find_transfer(session, expected.reference, for_update=True)
        if existing is None:
            raise ConflictError(f"reference {expected.reference!r} collides with another transfer")
    return _merge_expected(existing, expected, now), False


def _merge_expected(existing: Transfer, expected: ExpectedTransfer, now: dt.datetime) -> Transfer:
    if existing.origin == TransferOrigin.WEBHOOK.value and existing.amount is None:
        # The webhook came first (an orphan); the registration now supplies what was expected.
        existing.amount = expected.amount
        existing.fee = expected.fee
        existing.next_check_at = now
        existing.updated_at = now
        return existing
    refuse_different(
        "transfer",
        existing.reference,
        (
            ("reference", existing.reference, expected.reference),
            ("amount", existing.amount, expected.amount),
            ("fee", existing.fee, expected.fee),
            ("provider_reference", existing.provider_reference, expected.provider_reference),
        ),
    )
    return existing


def refuse_different(noun: str, reference: str, fields: Iterable[tuple[str, Any, Any]]) -> None:
    """ConflictError naming every (name, held, wanted) field whose wanted value is given and
    differs from the one held: a registration may repeat, never change, what is recorded."""
    differences = [name for name, have, want in fields if want is not None and have != want]
    if differences:
        raise ConflictError(
            f"{noun} {reference!r} is already registered with a different " + ", ".join(differences)
        )


def iso(value: dt.datetime | None) -> str | None:
    """An instant as every machine format shows it: ISO-8601 UTC ending in `Z` (never
    `+00:00`); a naive value is the ledger's UTC. None stays None."""
    if value is None:
        return None
    aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    return aware.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
