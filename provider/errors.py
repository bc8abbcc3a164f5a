"""Errors of the provider client; every failure a caller can see is one of these.

    ProviderError
    ├── ProviderRequestError          refused before sending (bad account number, amount, …)
    ├── AuthenticationError           401 Unauthenticated (missing, wrong, expired or
    │                                 wrong-environment key)
    ├── AccessDeniedError             403 IP whitelisting; .message is the provider's text
    │   ├── IPNotAllowedError         "Access denied. Your IP address is not allowed."
    │   └── IPWhitelistEmptyError     "Access denied. IP whitelisting is enabled but no
    │                                 IP addresses are configured."
    ├── ProviderValidationError       422; .errors is whatever the body said
    ├── EnquiryFailedError            "Account name enquiry failed"
    ├── TransferRejectedError         initiation refused, no money moved; .cause
    │   ├── InsufficientFundsError    "Insufficient funds"
    │   ├── DuplicateReferenceError   "Duplicate reference"
    │   ├── InvalidBankCodeError      "Invalid bank code"
    │   ├── AccountNotFoundError      "Account not found"
    │   └── WebhookNotConfiguredError "Webhook not configured"
    ├── NotFoundError                 404 (e.g. "Transaction not found")
    ├── TransientError                worth trying again later
    │   ├── ProviderUnavailableError  5xx, connection refused or reset
    │   ├── ProviderTimeoutError      no answer within the timeout
    │   └── RateLimitedError          429; .retry_after seconds or None
    └── UnexpectedResponseError       an answer that cannot be interpreted; .body (truncated)
        └── ForeignAnswerError        not the provider's format at all (an HTML page, a
                                      redirect, a 404 without its JSON envelope): the
                                      base URL points elsewhere; .url answered

Transport failures and HTTP answers are translated into this tree in one place,
`provider.core`; callers never see an `httpx` exception. No message here ever
carries the secret key: messages are built from the provider's answer, which
the core scrubs first.
"""

from __future__ import annotations

from typing import Any

BODY_LIMIT = 500


class ProviderError(Exception):
    """Root of every error the provider client raises."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


class ProviderRequestError(ProviderError):
    """The request was refused by the client itself; nothing was sent."""


class AuthenticationError(ProviderError):
    """The provider refused the key (spec, Authentication 6)."""


class AccessDeniedError(ProviderError):
    """IP whitelisting refused a transfer initiation (spec, IP whitelisting 4-5)."""


class IPNotAllowedError(AccessDeniedError):
    """This machine's address is not on the merchant's whitelist."""


class IPWhitelistEmptyError(AccessDeniedError):
    """Whitelisting is on but the list is empty, so every initiation is refused."""


class ProviderValidationError(ProviderError):
    """The provider answered 422; `errors` holds what its body said."""

    def __init__(self, message: str, *, errors: Any = None, status_code: int | None = 422) -> None:
        super().__init__(message, status_code=status_code)
        self.errors = errors


class EnquiryFailedError(ProviderError):
    """Account name enquiry found no account, or the bank does not hold it."""


class TransferRejectedError(ProviderError):
    """The provider refused to create the transfer; no money moved. `cause` is its text."""

    def __init__(self, cause: str, *, status_code: int | None = None) -> None:
        super().__init__(f"transfer refused: {cause}", status_code=status_code)
        self.cause = cause


class InsufficientFundsError(TransferRejectedError):
    """Wallet balance is below amount plus fee."""


class DuplicateReferenceError(TransferRejectedError):
    """The reference was used before; look it up instead of sending it again."""


class InvalidBankCodeError(TransferRejectedError):
    """The bank code is not one the provider lists."""


class AccountNotFoundError(TransferRejectedError):
    """The account number is not valid at that bank."""


class WebhookNotConfiguredError(TransferRejectedError):
    """The merchant has no webhook URL, so the provider refuses transfers."""


class NotFoundError(ProviderError):
    """The provider knows nothing by that reference or uid."""


class TransientError(ProviderError):
    """A failure that may go away; GETs are retried, POST outcomes must be looked up."""


class ProviderUnavailableError(TransientError):
    """5xx, or the connection was refused or broken."""


class ProviderTimeoutError(TransientError):
    """No answer within the timeout; the request may or may not have been applied."""


class RateLimitedError(TransientError):
    """429; `retry_after` is the wait the provider asked for, in seconds, when it said."""

    def __init__(
        self, message: str, *, retry_after: float | None, status_code: int | None = 429
    ) -> None:
        super().__init__(message, status_code=status_code)
        self.retry_after = retry_after


class UnexpectedResponseError(ProviderError):
    """An answer that is not what the spec describes; `body` is its start, for diagnosis."""

    def __init__(self, message: str, *, body: str = "", status_code: int | None = None) -> None:
        super().__init__(message, status_code=status_code)
        self.body = body[:BODY_LIMIT]


class ForeignAnswerError(UnexpectedResponseError):
    """An answer not in the provider's format: whatever answered is not the provider.

    Never a "not found": a wrong base URL (another server, a wrong path, a login
    redirect) must not read as transactions the provider lost. `url` is the address
    that answered, without credentials or query.
    """

    def __init__(self, message: str, *, url: str, body: str = "", status_code: int) -> None:
        super().__init__(message, body=body, status_code=status_code)
        self.url = url
