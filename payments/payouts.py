"""Paying out: name enquiry, the intent written first, then the initiation, then its answer.

The order is what makes a crash harmless. The intent (status pending,
initiation "intent") is committed before the provider is called, and due for a
lookup after a short grace; the provider's answer is recorded in a second
transaction. Whatever dies in between, the reconciler only ever *looks up* the
reference, never initiates again, so money moves at most once. A lost answer
is resolved by that lookup: found → accepted with the provider's figures; not
found `PAYRECON_NOT_FOUND_LIMIT` times over backoff → `unknown_to_provider` is
raised and the transfer stays pending (never silently failed: only the
provider knows whether it moved money).

The order is `payments.intent`'s, shared with collections. Test-only failpoints
(`payments.intent.failpoint`): `PAYRECON_FAILPOINT=after_intent|after_initiate` kills the
process right after the intent commits, or right after the provider accepted and before the
answer is recorded.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine
from sqlmodel import Session

from ledger.db import read_session, write_session
from ledger.errors import NumberInputError
from ledger.events import transfers as relay_transfers
from ledger.models import Transfer
from ledger.money import kobo_from_json
from ledger.queries import find_transfer
from ledger.subjects import checkable_row
from ledger.types import Initiation, TransferOrigin
from ledger.upsert import insert_ignore
from payments.errors import (
    DuplicatePayoutError,
    PayoutAccessDeniedError,
    PayoutAuthError,
    PayoutEnquiryError,
    PayoutError,
    PayoutInputError,
    PayoutPendingResolutionError,
    PayoutRejectedError,
    PayoutUnavailableError,
)
from payments.intent import INTENT_GRACE_SECONDS, OnIntent, mark_accepted, mark_refused, start
from provider.errors import (
    AccessDeniedError,
    AccountNotFoundError,
    AuthenticationError,
    EnquiryFailedError,
    InvalidBankCodeError,
    NotFoundError,
    ProviderError,
    ProviderRequestError,
    ProviderValidationError,
    TransferRejectedError,
    TransientError,
    WebhookNotConfiguredError,
)

logger = structlog.get_logger(__name__)

_REFERENCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,99}")
_ACCOUNT = re.compile(r"[0-9]{10}")
_BANK = re.compile(r"[0-9A-Za-z]{2,16}")


class PayoutClient(Protocol):
    """The provider calls a payout makes (ProviderClient satisfies it)."""

    def account_enquiry(self, account_number: str, bank_code: str) -> Any: ...
    def initiate_transfer(
        self, *, amount: int, bank_code: str, account_number: str, reference: str
    ) -> Any: ...
    def get_transaction(self, reference: str) -> Any: ...


@dataclass(frozen=True)
class PayoutRequest:
    """What to pay: amount in kobo to an account at a bank, under the merchant's reference."""

    amount: int
    bank_code: str
    account_number: str
    reference: str


@dataclass(frozen=True)
class Recipient:
    """Who a payout would reach, as the bank named them in the name enquiry."""

    account_name: str
    bank_name: str


# Called after the name enquiry, before anything is written or sent: whatever it raises
# stops the payout with nothing recorded (the CLI asks a person here).
Confirm = Callable[[PayoutRequest, Recipient], None]


@dataclass(frozen=True)
class PayoutResult:
    """The payout as the ledger now holds it; `created` False when it already existed."""

    reference: str
    provider_reference: str | None
    status: str
    initiation: str | None
    amount: int | None
    fee: int | None
    account_name: str | None
    created: bool = True


def validate(request: PayoutRequest) -> None:
    """Refuse a malformed request before anything is sent (PayoutInputError names the field)."""
    ref = request.reference if isinstance(request.reference, str) else None
    try:
        kobo_from_json(request.amount, minimum=1)
    except NumberInputError as exc:
        raise PayoutInputError(f"amount {exc}", field="amount", reference=ref) from None
    if not isinstance(request.bank_code, str) or not _BANK.fullmatch(request.bank_code):
        raise PayoutInputError(
            "bank code must be the code from the bank list", field="bank_code", reference=ref
        )
    if not isinstance(request.account_number, str) or not _ACCOUNT.fullmatch(
        request.account_number
    ):
        raise PayoutInputError(
            "account number must be exactly 10 digits", field="account_number", reference=ref
        )
    if ref is None or not _REFERENCE.fullmatch(ref):
        raise PayoutInputError(
            "reference must be 1-100 letters, digits, '_', '-', '.' or ':'",
            field="reference",
            reference=ref,
        )


def _result(transfer: Transfer, *, created: bool) -> PayoutResult:
    return PayoutResult(
        reference=transfer.reference,
        provider_reference=transfer.provider_reference,
        status=transfer.status,
        initiation=transfer.initiation,
        amount=transfer.amount,
        fee=transfer.fee,
        account_name=transfer.account_name,
        created=created,
    )


def _same(transfer: Transfer, request: PayoutRequest) -> bool:
    return (
        transfer.origin == TransferOrigin.INITIATED.value
        and transfer.amount == request.amount
        and transfer.bank_code == request.bank_code
        and transfer.account_number == request.account_number
    )


def _existing(engine: Engine, request: PayoutRequest) -> PayoutResult | None:
    with read_session(engine) as session:
        transfer = find_transfer(session, request.reference)
        if transfer is None:
            return None
        if not _same(transfer, request):
            raise DuplicatePayoutError(
                f"reference {request.reference} is already used by another transfer",
                reference=request.reference,
            )
        return _result(transfer, created=False)


def _enquire(client: PayoutClient, request: PayoutRequest) -> Recipient:
    try:
        answer = client.account_enquiry(request.account_number, request.bank_code)
    except EnquiryFailedError as exc:
        raise PayoutEnquiryError(
            f"account name enquiry failed for {request.account_number} at bank "
            f"{request.bank_code}: check the account number and bank code",
            reference=request.reference,
        ) from exc
    except AuthenticationError as exc:
        raise PayoutAuthError(
            "the provider refused the secret key (PAYRECON_PROVIDER_SECRET_KEY)",
            reference=request.reference,
        ) from exc
    except (TransientError, ProviderError) as exc:
        raise PayoutUnavailableError(
            f"account name enquiry could not be made ({exc.message}); nothing was sent",
            reference=request.reference,
        ) from exc
    return Recipient(str(answer.account_name), str(answer.bank_name))


def _record_accepted(
    engine: Engine,
    reference: str,
    *,
    provider_reference: str,
    fee: int | None,
    now: dt.datetime,
) -> PayoutResult:
    with write_session(engine) as session:
        transfer = find_transfer(session, reference, for_update=True)
        assert transfer is not None  # we wrote the intent ourselves
        if transfer.provider_reference is None:
            transfer.provider_reference = provider_reference
        if transfer.fee is None:
            transfer.fee = fee
        mark_accepted(transfer, now=now)
        return _result(transfer, created=True)


def _record_rejected(
    engine: Engine, reference: str, *, cause: str, message: str, now: dt.datetime
) -> None:
    with write_session(engine) as session:
        transfer = find_transfer(session, reference, for_update=True)
        assert transfer is not None
        if mark_refused(transfer, cause=cause, message=message, now=now):
            session.flush()
            relay_transfers.confirmed(session, transfer, now=now)


def _cause(exc: ProviderError) -> str:
    """The refusal's reason as the ledger records it (`failure_reason`)."""
    if isinstance(exc, TransferRejectedError):
        return exc.cause
    if isinstance(exc, AuthenticationError):
        return "Unauthenticated"
    return exc.message


def _what_to_do(exc: ProviderError) -> str:
    """The fix for a refusal the merchant can act on, as a clause to append ("" otherwise)."""
    if isinstance(exc, InvalidBankCodeError | AccountNotFoundError):
        return "; check the bank code and account number"
    if isinstance(exc, WebhookNotConfiguredError):
        # The provider pays out only to merchants it can notify (spec: Webhooks).
        return (
            "; set the webhook URL (this receiver's /webhook address) in the provider's "
            "dashboard (on the sandbox: start it with --webhook-url URL, "
            'or POST /_sandbox/webhook-url {"url": URL})'
        )
    if isinstance(exc, AccessDeniedError):
        return "; add this server's IP address to the IP whitelist in the provider's dashboard"
    return ""


def _resolve_duplicate(
    engine: Engine, client: PayoutClient, request: PayoutRequest, now: dt.datetime
) -> PayoutResult:
    """The provider already knows the reference: an earlier attempt of ours may have gone."""
    try:
        found = client.get_transaction(request.reference)
    except NotFoundError as exc:
        raise PayoutPendingResolutionError(
            f"the provider calls {request.reference} a duplicate but cannot find it; "
            "the reconciler will keep looking",
            reference=request.reference,
        ) from exc
    except ProviderError as exc:
        raise PayoutPendingResolutionError(
            f"the provider calls {request.reference} a duplicate and the lookup failed "
            f"({exc.message}); the reconciler will resolve it",
            reference=request.reference,
        ) from exc
    result = _record_accepted(
        engine, request.reference, provider_reference=found.reference, fee=found.fee, now=now
    )
    if found.amount != request.amount:
        # Not ours to settle here: the reconciler raises amount_mismatch on its check.
        raise DuplicatePayoutError(
            f"reference {request.reference} was already used at the provider for a different "
            f"amount ({found.amount} kobo); recorded for reconciliation",
            reference=request.reference,
        )
    return result


def send_payout(
    engine: Engine,
    client: PayoutClient,
    request: PayoutRequest,
    *,
    now: dt.datetime,
    grace: float = INTENT_GRACE_SECONDS,
    confirm: Confirm | None = None,
    on_intent: OnIntent | None = None,
) -> PayoutResult:
    """Pay out once: validate, enquire, (confirm,) commit the intent, initiate, record the answer.

    Raises a PayoutError subclass (payments.errors) whose `.kind` says how it failed. A
    reference already in the ledger for the same payout returns it unchanged
    (`created=False`) and sends nothing. `on_intent` runs in the intent's transaction (the
    audit log's row for the payout commits with the intent, or not at all).
    """
    validate(request)
    existing = _existing(engine, request)
    if existing is not None:
        return existing
    recipient = _enquire(client, request)
    if confirm is not None:
        confirm(request, recipient)
    payout = _Payout(engine, client, request, recipient.account_name, now, grace)
    return start(engine, payout, refusals=_REFUSALS, on_intent=on_intent)


# What the provider answers when it definitely did not create the transfer: nothing moved.
_REFUSALS = (
    TransferRejectedError,
    AccessDeniedError,
    AuthenticationError,
    ProviderValidationError,
    ProviderRequestError,
)


@dataclass(frozen=True)
class _Payout:
    """A payout on its way (`payments.intent.Movement`)."""

    engine: Engine
    client: PayoutClient
    request: PayoutRequest
    account_name: str
    now: dt.datetime
    grace: float
    after_intent: str = "after_intent"
    after_send: str = "after_initiate"

    def existing(self) -> PayoutResult | None:
        return _existing(self.engine, self.request)

    def write_intent(self, session: Session) -> bool:
        request = self.request
        new_id = insert_ignore(
            session,
            Transfer.__table__,  # type: ignore[attr-defined]
            checkable_row(
                now=self.now,
                # If we die before recording the answer, the reconciler looks it up then.
                next_check_at=self.now + dt.timedelta(seconds=self.grace),
                reference=request.reference,
                origin=TransferOrigin.INITIATED.value,
                amount=request.amount,
                bank_code=request.bank_code,
                account_number=request.account_number,
                account_name=self.account_name,
                initiation=Initiation.INTENT.value,
            ),
        )
        return new_id is not None

    def send(self) -> Any:
        request = self.request
        return self.client.initiate_transfer(
            amount=request.amount,
            bank_code=request.bank_code,
            account_number=request.account_number,
            reference=request.reference,
        )

    def accepted(self, answer: Any) -> PayoutResult:
        reference = self.request.reference
        result = _record_accepted(
            self.engine,
            reference,
            provider_reference=answer.reference,
            fee=answer.fee,
            now=self.now,
        )
        self._log().info("payout_accepted", provider_reference=answer.reference, fee=answer.fee)
        return result

    def duplicate(self) -> PayoutResult:
        self._log().warning("payout_duplicate_reference")
        return _resolve_duplicate(self.engine, self.client, self.request, self.now)

    def refused(self, exc: ProviderError) -> Exception:
        cause = _cause(exc)
        reference = self.request.reference
        _record_rejected(self.engine, reference, cause=cause, message=exc.message, now=self.now)
        self._log().warning("payout_rejected", cause=cause)
        return _refusal_error(self.request, exc, cause)

    def lost(self, exc: ProviderError) -> Exception:
        self._log().warning("payout_answer_lost", error=exc.message)
        reference = self.request.reference
        return PayoutPendingResolutionError(
            f"the provider's answer for {reference} was lost ({exc.message}); "
            "it is recorded and the reconciler will resolve it by lookup — do not send again",
            reference=reference,
        )

    def _log(self) -> Any:
        return logger.bind(reference=self.request.reference, amount=self.request.amount)


def _refusal_error(request: PayoutRequest, exc: ProviderError, cause: str) -> PayoutError:
    """What the caller is told of a recorded refusal: our key, or the provider's reason."""
    if isinstance(exc, AuthenticationError):
        return PayoutAuthError(
            "the provider refused the secret key (PAYRECON_PROVIDER_SECRET_KEY); nothing was paid",
            reference=request.reference,
        )
    error = PayoutAccessDeniedError if isinstance(exc, AccessDeniedError) else PayoutRejectedError
    return error(
        f"the provider refused transfer {request.reference}: {cause.rstrip('.')}"
        + _what_to_do(exc)
        + "; nothing was paid",
        cause=cause,
        reference=request.reference,
    )
