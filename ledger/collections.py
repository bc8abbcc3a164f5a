"""Reads and small writes over collections, shared by the admin API, the CLI and the reconciler."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.errors import ConflictError
from ledger.events.payloads import iso
from ledger.events.types import Subject
from ledger.finding_record import findings_of
from ledger.models import Collection
from ledger.queries import keyset_page, refuse_different, with_open_finding
from ledger.reference_search import either_reference
from ledger.subjects import checkable_row, find_by_reference
from ledger.types import Initiation, TransferOrigin, TransferStatus
from ledger.upsert import insert_ignore

# The cursor kind of collection pages (transfers use "t"): a cursor of one never pages the other.
CURSOR_KIND = "c"


def find_collection(
    session: Session, reference: str, *, for_update: bool = False
) -> Collection | None:
    """The collection whose merchant's or provider's reference is `reference` (the
    merchant's wins: `ledger.subjects.find_by_reference`)."""
    return find_by_reference(session, Collection, reference, for_update=for_update)


def collection_record(session: Session, collection: Collection) -> dict[str, Any]:
    """The collection as `GET /api/collections/{reference}` answers it (docs/rules.md keys)."""
    return {
        "reference": collection.reference,
        "provider_reference": collection.provider_reference,
        "origin": collection.origin,
        "status": collection.status,
        "confirmed": collection.confirmed,
        "amount": collection.amount,
        "amount_paid": collection.amount_paid,
        "fee": collection.fee,
        "provider_fee": collection.provider_fee,
        "account_number": collection.account_number,
        "account_name": collection.account_name,
        "bank_name": collection.bank_name,
        "customer_name": collection.customer_name,
        "customer_email": collection.customer_email,
        "customer_phone": collection.customer_phone,
        "expires_at": iso(collection.expires_at),
        "paid_at": iso(collection.paid_at),
        "failure_reason": collection.failure_reason,
        "initiation": collection.initiation,
        "next_check_at": iso(collection.next_check_at),
        "confirmed_at": iso(collection.confirmed_at),
        "created_at": iso(collection.created_at),
        "updated_at": iso(collection.updated_at),
        "findings": findings_of(session, collection),
    }


@dataclass(frozen=True)
class CollectionPage:
    """One page of collections and the cursor of the next page (None at the end)."""

    items: list[Collection]
    next_cursor: str | None


def list_collections(
    session: Session,
    *,
    status: TransferStatus | None = None,
    finding: str | None = None,
    since: dt.datetime | None = None,
    limit: int = 50,
    cursor: str | None = None,
    reference: str | None = None,
) -> CollectionPage:
    """Collections newest first, filtered (`reference`: a prefix of either reference, a
    `ledger.reference_search.search_key`); keyset-paginated by id so pages never shift."""
    statement = select(Collection)
    if reference:
        statement = statement.where(either_reference(Collection, reference))
    if status is not None:
        statement = statement.where(col(Collection.status) == status.value)
    if since is not None:
        statement = statement.where(col(Collection.created_at) >= since)
    if finding is not None:
        statement = statement.where(
            with_open_finding(Subject.COLLECTION, col(Collection.id), finding)
        )
    items, next_cursor = keyset_page(
        session, statement, Collection, limit=limit, cursor=cursor, kind=CURSOR_KIND
    )
    return CollectionPage(items, next_cursor)


@dataclass(frozen=True)
class CollectionIntent:
    """A collection payrecon is about to ask the provider for (checked by the caller)."""

    reference: str
    amount: int
    customer_name: str | None = None
    customer_email: str | None = None
    customer_phone: str | None = None


def write_intent(
    session: Session, intent: CollectionIntent, *, now: dt.datetime, grace: float
) -> bool:
    """Record the intent before the provider is called; False when the reference is taken.

    Due for a lookup after `grace`: if the creator dies before recording the answer, the
    reconciler finds the collection by its reference then.
    """
    new_id = insert_ignore(
        session,
        Collection.__table__,  # type: ignore[attr-defined]
        checkable_row(
            now=now,
            next_check_at=now + dt.timedelta(seconds=grace),
            reference=intent.reference,
            origin=TransferOrigin.INITIATED.value,
            amount=intent.amount,
            customer_name=intent.customer_name,
            customer_email=intent.customer_email,
            customer_phone=intent.customer_phone,
            initiation=Initiation.INTENT.value,
            final_check_done=False,
        ),
        ["reference"],
    )
    return new_id is not None


@dataclass(frozen=True)
class ExpectedCollection:
    """A collection created outside payrecon that the ledger should expect."""

    reference: str
    amount: int
    expires_at: dt.datetime | None = None


def expected_collection_row(expected: ExpectedCollection, now: dt.datetime) -> dict[str, Any]:
    """The new `collection` row of a registration (one rule for one registration and for the
    batched import, `payrecon.csvimport`)."""
    return checkable_row(
        now=now,
        next_check_at=now,  # newly registered: due at once
        reference=expected.reference,
        origin=TransferOrigin.EXPECTED.value,
        amount=expected.amount,
        expires_at=expected.expires_at,
        final_check_done=False,
    )


def register_expected_collection(
    session: Session, expected: ExpectedCollection, *, now: dt.datetime
) -> tuple[Collection, bool]:
    """Record an expected collection; (collection, created). ConflictError when the reference
    is already held with a different amount or expiry."""
    existing = find_collection(session, expected.reference, for_update=True)
    if existing is None:
        new_id = insert_ignore(
            session,
            Collection.__table__,  # type: ignore[attr-defined]
            expected_collection_row(expected, now),
            ["reference"],
        )
        if new_id is not None:
            created = session.get(Collection, new_id)
            assert created is not None
            return created, True
        existing = find_collection(session, expected.reference, for_update=True)
        if existing is None:
            raise ConflictError(
                f"reference {expected.reference!r} collides with another collection"
            )
    refuse_different(
        "collection",
        existing.reference,
        (
            ("reference", existing.reference, expected.reference),
            ("amount", existing.amount, expected.amount),
            ("expires_at", existing.expires_at, expected.expires_at),
        ),
    )
    return existing, False
