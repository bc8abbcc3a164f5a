"""Collecting: the intent written first, then the provider asked for an account, then its answer.

The same order as payouts (payments/payouts.py) and for the same reason: the intent (pending,
initiation "intent") is committed before the provider is called and is due for a lookup after
a short grace, so whatever dies in between, the reconciler only *looks the reference up*;
payrecon never creates the collection a second time. A provider answer of "Duplicate
reference" (a retry after a lost answer) is resolved the same way, by lookup.

Intent first (`payments.intent`, shared with payouts). Test-only failpoints:
`PAYRECON_FAILPOINT=collection_after_intent|collection_after_create`
kills the process right after the intent commits, or right after the provider answered and
before the answer is recorded.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine
from sqlmodel import Session

from ledger.collections import CollectionIntent, collection_record, find_collection, write_intent
from ledger.db import read_session, write_session
from ledger.errors import NumberInputError
from ledger.events import collections as relay_collections
from ledger.models import Collection
from ledger.money import kobo_from_json
from ledger.types import TransferOrigin, TransferStatus, takes_text
from payments.errors import (
    CollectionAuthError,
    CollectionInputError,
    CollectionPendingResolutionError,
    CollectionRejectedError,
    DuplicateCollectionError,
)
from payments.intent import INTENT_GRACE_SECONDS, OnIntent, mark_accepted, mark_refused, start
from provider.errors import (
    AuthenticationError,
    NotFoundError,
    ProviderError,
    ProviderRequestError,
    ProviderValidationError,
    TransferRejectedError,
)

logger = structlog.get_logger(__name__)

MAX_REFERENCE = 100
MAX_NAME = 200
MAX_EMAIL = 254
MAX_PHONE = 32
# Loose on purpose (docs/rules.md asks for shapes, not RFC 5322): one @, a dot after it, no blanks.
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
# Nigerian numbers are written 080…, +234 80…, 234-80-…; anything else only gets a warning.
_PHONE = re.compile(r"\+?[0-9(][0-9 ()\-]{6,19}")


class CollectionClient(Protocol):
    """The provider calls a collection makes (ProviderClient satisfies it)."""

    def create_collection(
        self,
        *,
        reference: str,
        amount: int,
        customer_name: str | None = None,
        customer_email: str | None = None,
        customer_phone: str | None = None,
        meta: Any = None,
        currency: str = "NGN",
    ) -> Any: ...
    def get_collection(self, reference: str) -> Any: ...


@dataclass(frozen=True)
class CollectionRequest:
    """What to collect: `amount` kobo under the merchant's reference, from a customer."""

    reference: str
    amount: int
    currency: str = "NGN"
    customer_name: str | None = None
    customer_email: str | None = None
    customer_phone: str | None = None


@dataclass(frozen=True)
class CollectionResult:
    """The collection as the ledger now holds it; `created` False when it already existed."""

    record: dict[str, Any]
    created: bool = True
    warnings: list[str] = field(default_factory=list)


def _text(value: object, name: str, limit: int, reference: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise CollectionInputError(f"{name} must be a string", field=name, reference=reference)
    if not value.strip():
        raise CollectionInputError(f"{name} must not be blank", field=name, reference=reference)
    if len(value) > limit:
        raise CollectionInputError(
            f"{name} must be at most {limit} characters", field=name, reference=reference
        )
    if value != value.strip() or not value.isprintable() or not takes_text(value):
        raise CollectionInputError(
            f"{name} must not have blanks around it or control characters",
            field=name,
            reference=reference,
        )
    return value


def validate(request: CollectionRequest) -> list[str]:
    """Refuse a malformed request before anything is sent (CollectionInputError names the
    field); the warnings about what is odd but allowed (a phone number's shape)."""
    reference = request.reference if isinstance(request.reference, str) else None
    if request.reference is None:
        raise CollectionInputError("reference is required", field="reference")
    _text(request.reference, "reference", MAX_REFERENCE, reference)
    if request.currency != "NGN":
        raise CollectionInputError(
            "currency must be NGN (collections are NGN only)", field="currency", reference=reference
        )
    try:
        kobo_from_json(request.amount, minimum=1)
    except NumberInputError as exc:
        raise CollectionInputError(f"amount {exc}", field="amount", reference=reference) from None
    _text(request.customer_name, "customer_name", MAX_NAME, reference)
    email = _text(request.customer_email, "customer_email", MAX_EMAIL, reference)
    if email is not None and not _EMAIL.fullmatch(email):
        raise CollectionInputError(
            "customer_email must look like name@example.com",
            field="customer_email",
            reference=reference,
        )
    phone = _text(request.customer_phone, "customer_phone", MAX_PHONE, reference)
    if phone is not None and not _PHONE.fullmatch(phone):
        return [f"customer_phone {phone!r} does not look like a phone number; sent as given"]
    return []


def _same(collection: Collection, request: CollectionRequest) -> bool:
    return (
        collection.origin == TransferOrigin.INITIATED.value and collection.amount == request.amount
    )


def _existing(engine: Engine, request: CollectionRequest) -> CollectionResult | None:
    with read_session(engine) as session:
        collection = find_collection(session, request.reference)
        if collection is None:
            return None
        if not _same(collection, request):
            raise DuplicateCollectionError(
                f"reference {request.reference} is already used by another collection",
                reference=request.reference,
            )
        return CollectionResult(collection_record(session, collection), created=False)


def _record_created(
    engine: Engine, reference: str, answer: Any, *, now: dt.datetime
) -> CollectionResult:
    """Store the provider's account details (the create answer, spec endpoint 5)."""
    with write_session(engine) as session:
        collection = find_collection(session, reference, for_update=True)
        assert collection is not None  # we wrote the intent ourselves
        collection.account_number = answer.account_number
        collection.account_name = answer.account_name
        collection.bank_name = answer.bank_name
        if collection.fee is None:
            collection.fee = answer.fee
        if collection.expires_at is None and answer.expires_at is not None:
            collection.expires_at = answer.expires_at
        mark_accepted(collection, now=now)
        session.flush()
        return CollectionResult(collection_record(session, collection))


def _record_rejected(engine: Engine, reference: str, *, cause: str, now: dt.datetime) -> None:
    with write_session(engine) as session:
        collection = find_collection(session, reference, for_update=True)
        assert collection is not None
        # A definite refusal is final: no account exists, nothing to check.
        if mark_refused(collection, cause=cause, message=cause, now=now):
            session.flush()
            relay_collections.confirmed(session, collection, now=now)


def _resolve_duplicate(
    engine: Engine, client: CollectionClient, request: CollectionRequest, now: dt.datetime
) -> CollectionResult:
    """The provider already knows the reference: an earlier attempt of ours may have gone."""
    try:
        found = client.get_collection(request.reference)
    except NotFoundError as exc:
        raise CollectionPendingResolutionError(
            f"the provider calls {request.reference} a duplicate but cannot find it as a "
            "collection; the reconciler will keep looking",
            reference=request.reference,
        ) from exc
    except ProviderError as exc:
        raise CollectionPendingResolutionError(
            f"the provider calls {request.reference} a duplicate and the lookup failed "
            f"({exc.message}); the reconciler will resolve it",
            reference=request.reference,
        ) from exc
    with write_session(engine) as session:
        collection = find_collection(session, request.reference, for_update=True)
        assert collection is not None
        if collection.provider_reference is None:
            collection.provider_reference = found.reference
        mark_accepted(collection, now=now)
        session.flush()
        record = collection_record(session, collection)
    if found.amount != request.amount and _status(found) == TransferStatus.PENDING.value:
        raise DuplicateCollectionError(
            f"reference {request.reference} was already used at the provider for a different "
            f"amount ({found.amount} kobo); recorded for reconciliation",
            reference=request.reference,
        )
    return CollectionResult(record)


def _status(found: Any) -> str:
    return str(getattr(found.status, "value", found.status))


# What the provider answers when it definitely did not create the collection.
_REFUSALS = (
    TransferRejectedError,
    AuthenticationError,
    ProviderValidationError,
    ProviderRequestError,
)


def create_collection(
    engine: Engine,
    client: CollectionClient,
    request: CollectionRequest,
    *,
    now: dt.datetime,
    grace: float = INTENT_GRACE_SECONDS,
    on_intent: OnIntent | None = None,
) -> CollectionResult:
    """Create once: validate, commit the intent, ask the provider, record the answer.

    Raises a CollectionError subclass (payments.errors). A reference already in the ledger
    for the same collection returns it unchanged (`created=False`) and sends nothing.
    `on_intent` runs in the intent's transaction (the audit log's row commits with it).
    """
    warnings = validate(request)
    existing = _existing(engine, request)
    if existing is not None:
        return existing
    creation = _Creation(engine, client, request, now, grace)
    result = start(engine, creation, refusals=_REFUSALS, on_intent=on_intent)
    if not result.created:  # a concurrent create with the same reference won the insert
        return result
    return CollectionResult(result.record, created=True, warnings=warnings)


@dataclass(frozen=True)
class _Creation:
    """A collection on its way (`payments.intent.Movement`)."""

    engine: Engine
    client: CollectionClient
    request: CollectionRequest
    now: dt.datetime
    grace: float
    after_intent: str = "collection_after_intent"
    after_send: str = "collection_after_create"

    def existing(self) -> CollectionResult | None:
        return _existing(self.engine, self.request)

    def write_intent(self, session: Session) -> bool:
        request = self.request
        intent = CollectionIntent(
            reference=request.reference,
            amount=request.amount,
            customer_name=request.customer_name,
            customer_email=request.customer_email,
            customer_phone=request.customer_phone,
        )
        return write_intent(session, intent, now=self.now, grace=self.grace)

    def send(self) -> Any:
        request = self.request
        return self.client.create_collection(
            reference=request.reference,
            amount=request.amount,
            customer_name=request.customer_name,
            customer_email=request.customer_email,
            customer_phone=request.customer_phone,
            currency=request.currency,
        )

    def accepted(self, answer: Any) -> CollectionResult:
        result = _record_created(self.engine, self.request.reference, answer, now=self.now)
        self._log().info("collection_created", account_number=answer.account_number)
        return result

    def duplicate(self) -> CollectionResult:
        self._log().warning("collection_duplicate_reference")
        return _resolve_duplicate(self.engine, self.client, self.request, self.now)

    def refused(self, exc: ProviderError) -> Exception:
        reference = self.request.reference
        cause = "Unauthenticated" if isinstance(exc, AuthenticationError) else exc.message
        _record_rejected(self.engine, reference, cause=cause, now=self.now)
        self._log().warning("collection_rejected", cause=cause)
        if isinstance(exc, AuthenticationError):
            return CollectionAuthError(
                "the provider refused the secret key (PAYRECON_PROVIDER_SECRET_KEY); "
                "no collection was created",
                reference=reference,
            )
        return CollectionRejectedError(
            f"the provider refused collection {reference}: {cause.rstrip('.')}",
            reference=reference,
        )

    def lost(self, exc: ProviderError) -> Exception:
        self._log().warning("collection_answer_lost", error=exc.message)
        reference = self.request.reference
        return CollectionPendingResolutionError(
            f"the provider's answer for {reference} was lost ({exc.message}); it is "
            "recorded and the reconciler will resolve it by lookup — do not create it again",
            reference=reference,
        )

    def _log(self) -> Any:
        return logger.bind(reference=self.request.reference, amount=self.request.amount)
