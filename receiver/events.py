"""Parse a raw webhook body into an event: a pure function, no I/O (spec: Events)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ledger.money import MAX_KOBO
from ledger.types import (
    MAX_REFERENCE,
    PROVIDER_STATUSES,
    EventType,
    TransferStatus,
    storable,
    storable_text,
)
from receiver.errors import BodyNotJSONError, InvalidEventError

MAX_EVENT_NAME = 64
MAX_REASON = 2000


# Which status each handled event must carry (spec: Events table).
_EVENT_STATUS = {
    EventType.TRANSFER_SUCCESS: TransferStatus.SUCCESSFUL,
    EventType.TRANSFER_FAILED: TransferStatus.FAILED,
}
# Members by value: a dict lookup costs a tenth of calling the enum.
_EVENT_TYPES = {member.value: member for member in EventType}
_STATUSES = {member.value: member for member in PROVIDER_STATUSES}


@dataclass(frozen=True, slots=True)
class TransferEvent:
    """A valid `transfer.success` or `transfer.failed` event."""

    event: EventType
    reference: str  # the provider's reference
    merchant_reference: str | None
    status: TransferStatus
    amount: int | None
    fee: int | None
    failure_reason: str | None
    canonical: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class IgnoredEvent:
    """A well-formed event of a type the receiver does not apply; stored only."""

    event: str
    reference: str | None
    canonical: str
    content_hash: str


ParsedEvent = TransferEvent | IgnoredEvent


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# One stateless encoder and decoder: json.dumps/json.loads with options build a new one per
# call, which costs more than encoding or decoding a webhook body.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces, ASCII-only: equal content gives equal text."""
    return _CANONICAL.encode(value)


def load_json(raw: bytes) -> Any:
    """Decode UTF-8 JSON strictly (no NaN/Infinity); BodyNotJSONError when it is not."""
    try:
        text = raw.decode("utf-8")
        return _DECODER.decode(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        # RecursionError: deeply nested arrays are hostile input, not our failure.
        raise BodyNotJSONError(f"body is not JSON: {type(exc).__name__}") from None


def _descriptive_text(value: Any, field: str, *, limit: int) -> str | None:
    # Free text (a failure reason) is evidence, not a key: kept whatever it holds, line breaks
    # included, and made storable (NUL dropped, an unpaired surrogate shown as U+FFFD) rather
    # than refusing the whole event over it.
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidEventError(f"{field} must be a string", field)
    if len(value) > limit:
        raise InvalidEventError(f"{field} is longer than {limit} characters", field)
    return storable_text(value)


def _clean_text(value: Any, field: str, *, limit: int, required: bool) -> str | None:
    if value is None:
        if required:
            raise InvalidEventError(f"{field} is required", field)
        return None
    if not isinstance(value, str):
        raise InvalidEventError(f"{field} must be a string", field)
    if required and not value.strip():
        raise InvalidEventError(f"{field} must not be empty", field)
    if len(value) > limit:
        raise InvalidEventError(f"{field} is longer than {limit} characters", field)
    if not storable(value):
        raise InvalidEventError(f"{field} contains control or unpaired surrogate characters", field)
    return value


def _kobo(data: dict[str, Any], field: str, *, required: bool) -> int | None:
    if field not in data or data[field] is None:
        if required:
            raise InvalidEventError(f"data.{field} is required", f"data.{field}")
        return None
    value = data[field]
    # bool is an int in Python; JSON true is not an amount.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidEventError(f"data.{field} must be an integer number of kobo", f"data.{field}")
    if not 0 <= value <= MAX_KOBO:
        raise InvalidEventError(f"data.{field} must be between 0 and 2^63-1 kobo", f"data.{field}")
    return value


def parse_event(raw: bytes) -> ParsedEvent:
    """Parse a webhook body; raise BodyNotJSONError (400) or InvalidEventError (422)."""
    body = load_json(raw)
    if not isinstance(body, dict):
        raise InvalidEventError("body must be a JSON object", None)
    name = _clean_text(body.get("event"), "event", limit=MAX_EVENT_NAME, required=True)
    assert name is not None
    data = body.get("data")
    if not isinstance(data, dict):
        raise InvalidEventError("data must be a JSON object", "data")
    canonical = canonical_json(body)
    digest = hashlib.sha256(canonical.encode("ascii")).hexdigest()
    event = _EVENT_TYPES.get(name)
    if event is None:
        reference = data.get("reference")
        # Kept only as a label of the archived delivery, so one that could not be stored
        # (too long, control characters, unpaired surrogates) is dropped, not refused.
        clean = (
            reference
            if isinstance(reference, str)
            and len(reference) <= MAX_REFERENCE
            and storable(reference)
            else None
        )
        return IgnoredEvent(name, clean, canonical, digest)
    return _transfer_event(event, data, canonical, digest)


def _transfer_event(
    event: EventType, data: dict[str, Any], canonical: str, digest: str
) -> TransferEvent:
    reference = _clean_text(
        data.get("reference"), "data.reference", limit=MAX_REFERENCE, required=True
    )
    merchant = _clean_text(
        data.get("merchant_reference"),
        "data.merchant_reference",
        limit=MAX_REFERENCE,
        required=False,
    )
    raw_status = data.get("status")
    if not isinstance(raw_status, str):
        raise InvalidEventError("data.status is required and must be a string", "data.status")
    status = _STATUSES.get(raw_status)
    if status is None:
        raise InvalidEventError(f"data.status {raw_status[:40]!r} is unknown", "data.status")
    if status is not _EVENT_STATUS[event]:
        raise InvalidEventError(f"{event.value} cannot carry status {status.value}", "data.status")
    success = event is EventType.TRANSFER_SUCCESS
    amount = _kobo(data, "amount", required=success)
    fee = _kobo(data, "fee", required=success)
    reason = _descriptive_text(data.get("failure_reason"), "data.failure_reason", limit=MAX_REASON)
    assert reference is not None
    return TransferEvent(
        event=event,
        reference=reference,
        merchant_reference=merchant or None,
        status=status,
        amount=amount,
        fee=fee,
        failure_reason=reason if not success else None,
        canonical=canonical,
        content_hash=digest,
    )
