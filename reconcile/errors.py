"""Errors of the reconcile package (payouts, reconciler passes, alerts).

ReconcileError
├── PayoutError                    a payout was not made as asked; .kind says how
│   ├── PayoutInputError           the request itself is malformed (nothing sent)
│   ├── PayoutEnquiryError         name enquiry failed: wrong account/bank (nothing sent)
│   ├── DuplicatePayoutError       the reference already names a different payout
│   ├── PayoutRejectedError        the provider refused it; no money moved; .cause
│   ├── PayoutUnavailableError     the provider could not be asked (nothing sent)
│   ├── PayoutAuthError            the provider refused our key
│   └── PayoutPendingResolutionError  sent, answer lost: the reconciler will look it up
├── ProviderKeyRefusedError        a reconcile pass stopped: the provider refused the key
├── ProviderMisconfiguredError     a reconcile pass stopped: no answer came from the provider
├── LeaseHeldError                 another reconciler holds the SQLite runner lease
└── AlertURLError                  an alert URL is refused by the outbound policy
"""

from __future__ import annotations

import enum


class ReconcileError(Exception):
    """Base of every error raised by the reconcile package."""


class PayoutErrorKind(enum.StrEnum):
    """How a payout failed, with the HTTP status an API should answer."""

    INVALID = "invalid"  # 422
    ENQUIRY_FAILED = "enquiry_failed"  # 422
    DUPLICATE = "duplicate"  # 409
    REJECTED = "rejected"  # 422 (403 for whitelisting)
    UNAVAILABLE = "unavailable"  # 503
    AUTH = "auth"  # 502: our key, not the caller's fault
    PENDING = "pending"  # 202: accepted for resolution by the reconciler

    @property
    def http_status(self) -> int:
        """The HTTP status an API answers for this kind."""
        return _HTTP[self]


_HTTP = {
    PayoutErrorKind.INVALID: 422,
    PayoutErrorKind.ENQUIRY_FAILED: 422,
    PayoutErrorKind.DUPLICATE: 409,
    PayoutErrorKind.REJECTED: 422,
    PayoutErrorKind.UNAVAILABLE: 503,
    PayoutErrorKind.AUTH: 502,
    PayoutErrorKind.PENDING: 202,
}


class PayoutError(ReconcileError):
    """A payout did not go through as asked; `message` is one clear sentence."""

    kind: PayoutErrorKind = PayoutErrorKind.INVALID

    def __init__(self, message: str, *, reference: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reference = reference

    @property
    def http_status(self) -> int:
        """The HTTP status an API should answer."""
        return self.kind.http_status


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

    def __init__(
        self, message: str, *, cause: str, reference: str | None = None, http_status: int = 422
    ) -> None:
        super().__init__(message, reference=reference)
        self.cause = cause
        self._http_status = http_status

    @property
    def http_status(self) -> int:
        """422, or 403 when IP whitelisting refused it."""
        return self._http_status


class PayoutUnavailableError(PayoutError):
    """The provider could not be reached before anything was sent (enquiry)."""

    kind = PayoutErrorKind.UNAVAILABLE


class PayoutAuthError(PayoutError):
    """The provider refused our secret key."""

    kind = PayoutErrorKind.AUTH


class PayoutPendingResolutionError(PayoutError):
    """The initiation was sent but its answer was lost; the reconciler resolves it by lookup."""

    kind = PayoutErrorKind.PENDING


class ProviderKeyRefusedError(ReconcileError):
    """The provider answered 401 to a lookup: the key is wrong, expired or of the wrong env."""


class ProviderMisconfiguredError(ReconcileError):
    """Every lookup of a pass got an answer not in the provider's format: the base URL is
    wrong (another server, a wrong path, a redirect)."""


class LeaseHeldError(ReconcileError):
    """Another reconciler runs against this SQLite ledger."""

    def __init__(self, owner: str, until: str) -> None:
        super().__init__(f"another reconciler ({owner}) holds the ledger lease until {until}")
        self.owner = owner
        self.until = until


class AlertURLError(ReconcileError):
    """An alert URL breaks the outbound policy (plain http, loopback or private host)."""
