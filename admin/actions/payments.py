"""Money actions: pay out, create a collection, and register transfers or collections made
elsewhere (one, or a whole file) (docs/rules.md: Payouts, Collections)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from admin.actions.actor import Actor, audit
from admin.errors import AdminError, ConflictError, InvalidError
from admin.expected import register as register_transfer
from admin.expected import register_collection
from ledger.audit import AuditAction
from ledger.errors import ConflictError as LedgerConflictError
from payments.collections import (
    CollectionClient,
    CollectionRequest,
    CollectionResult,
    create_collection,
)
from payments.errors import (
    CollectionError,
    CollectionInputError,
    PayoutAccessDeniedError,
    PayoutError,
    PayoutErrorKind,
)
from payments.payouts import Confirm, PayoutClient, PayoutRequest, PayoutResult, send_payout

# The answer's status for each way a payout fails (payments/ carries no HTTP codes).
PAYOUT_STATUS = {
    PayoutErrorKind.INVALID: 422,
    PayoutErrorKind.ENQUIRY_FAILED: 422,
    PayoutErrorKind.DUPLICATE: 409,
    PayoutErrorKind.REJECTED: 422,
    PayoutErrorKind.UNAVAILABLE: 503,
    PayoutErrorKind.AUTH: 502,  # our key, not the caller's fault
    PayoutErrorKind.PENDING: 202,  # accepted for resolution by the reconciler
}


def payout_status(exc: PayoutError) -> int:
    """The HTTP status a payout error is answered with."""
    if isinstance(exc, PayoutAccessDeniedError):
        return 403  # the provider's own answer to a server off its IP whitelist
    return PAYOUT_STATUS[exc.kind]


def refused(exc: PayoutError | CollectionError, reference: object) -> AdminError:
    """A payments error as the admin tree's: its kind is the answer's `error` code."""
    if isinstance(exc, CollectionInputError):
        return InvalidError(exc.field, exc.message)
    status = payout_status(exc) if isinstance(exc, PayoutError) else PAYOUT_STATUS[exc.kind]
    return AdminError(
        exc.message if isinstance(exc, CollectionError) else str(exc),
        code=exc.kind.value,
        status_code=status,
        reference=reference if isinstance(reference, str) else None,
    )


def pay_out(
    engine: Engine,
    client: PayoutClient,
    actor: Actor,
    payout: PayoutRequest,
    *,
    now: dt.datetime,
    confirm: Confirm | None = None,
) -> PayoutResult:
    """Pay out once (payments.payouts.send_payout), audited in the intent's transaction.
    Raises the payments errors (`refused` gives their answer)."""

    def audited(session: Session) -> None:
        detail = f"amount {payout.amount} kobo to {payout.bank_code}/{payout.account_number}"
        subject = f"transfer:{payout.reference}"
        audit(session, actor, AuditAction.PAYOUT_CREATE, subject, detail, now=now)

    return send_payout(engine, client, payout, now=now, confirm=confirm, on_intent=audited)


def collect(
    engine: Engine,
    client: CollectionClient,
    actor: Actor,
    wanted: CollectionRequest,
    *,
    now: dt.datetime,
) -> CollectionResult:
    """Create a collection once (payments.collections), audited with its intent."""

    def audited(session: Session) -> None:
        subject = f"collection:{wanted.reference}"
        detail = f"amount {wanted.amount} kobo"
        audit(session, actor, AuditAction.COLLECTION_CREATE, subject, detail, now=now)

    return create_collection(engine, client, wanted, now=now, on_intent=audited)


@dataclass(frozen=True)
class Registry:
    """A kind of registration: the subject its audit rows name, its action and its writer."""

    subject: str
    action: AuditAction
    write: Callable[..., tuple[dict[str, Any], bool]]


TRANSFERS = Registry("transfer", AuditAction.EXPECTED_REGISTER, register_transfer)
COLLECTIONS = Registry("collection", AuditAction.COLLECTION_EXPECT, register_collection)


def register(
    session: Session, actor: Actor, registry: Registry, expected: Any, *, now: dt.datetime
) -> tuple[dict[str, Any], bool]:
    """Register one (idempotently): (its record, created); a new one is audited on
    `subject:REFERENCE`. ConflictError when the reference is registered differently."""
    try:
        record, created = registry.write(session, expected, now=now)
    except LedgerConflictError as exc:
        raise ConflictError(str(exc)) from exc
    if created:
        subject = f"{registry.subject}:{record['reference']}"
        audit(session, actor, registry.action, subject, None, now=now)
    return record, created


def register_many(
    session: Session,
    actor: Actor,
    registry: Registry,
    rows: Iterable[Any],
    *,
    source: str,
    now: dt.datetime,
) -> tuple[int, int]:
    """Register every row (first row at line 2 of `source`): (created, identical). A conflict
    anywhere is a ConflictError naming the line (the caller's transaction rolls back); the
    import is one audit row."""
    created = identical = 0
    for line, expected in enumerate(rows, start=2):
        try:
            _, was_created = registry.write(session, expected, now=now)
        except LedgerConflictError as exc:
            raise ConflictError(f"{source}:{line}: {exc}") from exc
        created += was_created
        identical += not was_created
    if created:
        detail = f"{created} registered from {source.rsplit('/', 1)[-1]}"
        audit(session, actor, registry.action, None, detail, now=now)
    return created, identical
