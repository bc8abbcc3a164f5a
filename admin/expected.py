"""Registering transfers and collections made elsewhere: shared by the admin API and the CLI."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from sqlmodel import Session

from admin.errors import ExpectedInputError
from ledger.collections import (
    ExpectedCollection,
    collection_record,
    register_expected_collection,
)
from ledger.errors import NumberInputError
from ledger.events.findings import resolve_finding
from ledger.events.types import Subject
from ledger.money import kobo_from_json, kobo_from_text
from ledger.queries import ExpectedTransfer, register_expected, transfer_record
from ledger.types import MAX_REFERENCE, FindingKind, TransferOrigin, storable

MONEY_FIELDS = ("amount", "fee")


def _reference(data: Mapping[str, Any], field: str, *, required: bool) -> str | None:
    value = data.get(field)
    if value is None or value == "":
        if required:
            raise ExpectedInputError(field, "is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise ExpectedInputError(field, "must be a non-empty string")
    value = value.strip()
    if len(value) > MAX_REFERENCE or not storable(value):
        raise ExpectedInputError(field, f"must be at most {MAX_REFERENCE} printable characters")
    return value


def _kobo(data: Mapping[str, Any], field: str, *, required: bool) -> int | None:
    value = data.get(field)
    if value is None:
        if required:
            raise ExpectedInputError(field, "is required")
        return None
    try:
        return kobo_from_json(value)
    except NumberInputError as exc:
        raise ExpectedInputError(field, str(exc)) from None


def parse_expected(data: Mapping[str, Any]) -> ExpectedTransfer:
    """Validate a registration given as JSON values (a JSON body, or CLI options already
    converted): money must be integers, never text."""
    reference = _reference(data, "reference", required=True)
    amount = _kobo(data, "amount", required=True)
    assert reference is not None and amount is not None
    return ExpectedTransfer(
        reference=reference,
        amount=amount,
        fee=_kobo(data, "fee", required=False),
        provider_reference=_reference(data, "provider_reference", required=False),
    )


def parse_expected_row(row: Mapping[str, str | None]) -> ExpectedTransfer:
    """Validate a registration given as text (a CSV row): money cells in ASCII digits only,
    an empty cell meaning not given."""
    data: dict[str, Any] = dict(row)
    for field in MONEY_FIELDS:
        cell = row.get(field)
        if cell is None or not cell.strip(" \t"):
            data[field] = None
            continue
        try:
            data[field] = kobo_from_text(cell)
        except NumberInputError as exc:
            raise ExpectedInputError(field, str(exc)) from None
    return parse_expected(data)


def register(
    session: Session, expected: ExpectedTransfer, *, now: dt.datetime
) -> tuple[dict[str, Any], bool]:
    """Register (idempotently) and return (the transfer record, created). Raises ConflictError."""
    transfer, created = register_expected(session, expected, now=now)
    if transfer.origin == TransferOrigin.WEBHOOK.value:
        # The webhook came before the registration: it is no longer an orphan.
        transfer.origin = TransferOrigin.EXPECTED.value
        assert transfer.id is not None
        resolve_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=transfer.id,
            kind=FindingKind.ORPHAN_EVENT,
            now=now,
        )
    session.flush()
    return transfer_record(session, transfer), created


def _instant(data: Mapping[str, Any], field: str) -> dt.datetime | None:
    value = data.get(field)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 64:
        raise ExpectedInputError(field, "must be an ISO-8601 date and time")
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ExpectedInputError(field, "must be an ISO-8601 date and time") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)  # naive means UTC, as in query strings
    try:
        return parsed.astimezone(dt.UTC)
    except OverflowError:
        raise ExpectedInputError(field, "is out of range (years 1 to 9999 UTC)") from None


def parse_expected_collection(data: Mapping[str, Any]) -> ExpectedCollection:
    """Validate a collection registration given as JSON values (amount a JSON integer > 0,
    `expires_at` ISO-8601, naive meaning UTC)."""
    reference = _reference(data, "reference", required=True)
    amount = _kobo(data, "amount", required=True)
    assert reference is not None and amount is not None
    if amount < 1:
        raise ExpectedInputError("amount", "must be at least 1 kobo")
    return ExpectedCollection(
        reference=reference, amount=amount, expires_at=_instant(data, "expires_at")
    )


def parse_expected_collection_row(row: Mapping[str, str | None]) -> ExpectedCollection:
    """A collection registration given as a CSV row (amount in ASCII digits only)."""
    data: dict[str, Any] = dict(row)
    cell = row.get("amount")
    if cell is None or not cell.strip(" \t"):
        data["amount"] = None
    else:
        try:
            data["amount"] = kobo_from_text(cell)
        except NumberInputError as exc:
            raise ExpectedInputError("amount", str(exc)) from None
    return parse_expected_collection(data)


def register_collection(
    session: Session, expected: ExpectedCollection, *, now: dt.datetime
) -> tuple[dict[str, Any], bool]:
    """Register (idempotently) and return (the collection record, created). Raises
    ConflictError."""
    collection, created = register_expected_collection(session, expected, now=now)
    session.flush()
    return collection_record(session, collection), created
