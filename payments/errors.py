"""Errors of the payments package: how a payout was not made as asked.

PaymentError
└── PayoutError                    a payout was not made as asked; .kind says how
    ├── PayoutInputError           the request itself is malformed (nothing sent); .field
    ├── PayoutEnquiryError         name enquiry failed: wrong account/bank (nothing sent)
    ├── DuplicatePayoutError       the reference already names a different payout
    ├── PayoutRejectedError        the provider refused it; no money moved; .cause
    │   └── PayoutAccessDeniedError   refused by the provider's IP whitelisting
    ├── PayoutUnavailableError     the provider could not be asked (nothing sent)
    ├── PayoutAuthError            the provider refused our key
    └── PayoutPendingResolutionError  sent, answer lost: the reconciler will look it up
└── CollectionError                a collection was not created as asked; .kind as for payouts
    ├── CollectionInputError       the request itself is malformed (nothing sent); .field
    ├── DuplicateCollectionError   the reference already names a different collection
    ├── CollectionRejectedError    the provider refused it; nothing to pay into
    ├── CollectionAuthError        the provider refused our key
    └── CollectionPendingResolutionError  sent, answer lost: the reconciler will look it up

No HTTP status codes here: each caller says what a kind means to it (the admin API an
answer's status, the CLI an exit code).
"""

from __future__ import annotations

import enum


class PaymentError(Exception):
    """Base of every error raised by the payments package."""


class PayoutErrorKind(enum.StrEnum):
    """How a payout failed; the API names it in its `error` field."""

    INVALID = "invalid"
    ENQUIRY_FAILED = "enquiry_failed"
    DUPLICATE = "duplicate"
    REJECTED = "rejected"
    UNAVAILABLE = "unavailable"
    AUTH = "auth"  # our key, not the caller's fault
    PENDING = "pending"  # left for the reconciler to resolve by lookup


class PayoutError(PaymentError):
    """A payout did not go through as asked; `message` is one clear sentence."""

    kind: PayoutErrorKind = PayoutErrorKind.INVALID

    def __init__(self, message: str, *, reference: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reference = reference


class PayoutInputError(PayoutError):
    """Amount, bank code, account number or reference is malformed; nothing was sent."""

    kind = PayoutErrorKind.INVALID

    def __init__(self, message: str, *, field: str, reference: str | None = None) -> None:
        super().__init__(message, reference=reference)
        self.field = field


class PayoutEnquiryError(PayoutError):
    """Name enquiry failed (spec: recommended flow); nothing was written or sent."""

    kind = PayoutErrorKind.ENQUIRY_FAILED


class DuplicatePayoutError(PayoutError):
    """The reference is already used by a different payout (ledger or provider)."""

    kind = PayoutErrorKind.DUPLICATE


class PayoutRejectedError(PayoutError):
    """The provider refused the initiation; recorded as failed, no money moved."""

    kind = PayoutErrorKind.REJECTED

    def __init__(self, message: str, *, cause: str, reference: str | None = None) -> None:
        super().__init__(message, reference=reference)
        self.cause = cause


class PayoutAccessDeniedError(PayoutRejectedError):
    """The provider's IP whitelisting refused the initiation (its 403); no money moved."""


class PayoutUnavailableError(PayoutError):
    """The provider could not be reached before anything was sent (enquiry)."""

    kind = PayoutErrorKind.UNAVAILABLE


class PayoutAuthError(PayoutError):
    """The provider refused our secret key."""

    kind = PayoutErrorKind.AUTH


class PayoutPendingResolutionError(PayoutError):
    """The initiation was sent but its answer was lost; the reconciler resolves it by lookup."""

    kind = PayoutErrorKind.PENDING


class CollectionError(PaymentError):
    """A collection was not created as asked; `message` is one clear sentence. The kinds are
    the payouts' (the API and the CLI map them the same way)."""

    kind: PayoutErrorKind = PayoutErrorKind.INVALID

    def __init__(self, message: str, *, reference: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reference = reference


class CollectionInputError(CollectionError):
    """Amount, currency, reference or a customer field is malformed; nothing was sent."""

    kind = PayoutErrorKind.INVALID

    def __init__(self, message: str, *, field: str, reference: str | None = None) -> None:
        super().__init__(message, reference=reference)
        self.field = field


class DuplicateCollectionError(CollectionError):
    """The reference is already used by a different collection (ledger or provider)."""

    kind = PayoutErrorKind.DUPLICATE


class CollectionRejectedError(CollectionError):
    """The provider refused the creation; recorded as failed, nothing to pay into."""

    kind = PayoutErrorKind.REJECTED


class CollectionAuthError(CollectionError):
    """The provider refused our secret key."""

    kind = PayoutErrorKind.AUTH


class CollectionPendingResolutionError(CollectionError):
    """The creation was sent but its answer was lost; the reconciler resolves it by lookup."""

    kind = PayoutErrorKind.PENDING
