"""Errors of the receiver; each that reaches a sender carries the HTTP status it answers with.

ReceiverError
├── DeliveryRejectedError          the delivery is refused and NOT archived
│   ├── UnauthenticatedError       401: token, shared secret or signature missing or wrong
│   ├── ForbiddenSourceError       403: the sender's address is not on the allowlist
│   └── BodyTimeoutError           408: the body did not arrive within PAYRECON_BODY_TIMEOUT
├── DeliveryInvalidError           archived, not applied
│   ├── BodyTooLargeError          413
│   ├── BodyNotJSONError           400
│   ├── UnsupportedMediaTypeError  415
│   └── InvalidEventError          422: JSON that is not a valid event
├── IngestUnavailableError         503: the ledger could not take the write; the provider retries
└── BatchRaceError                 never answered: another transaction wrote one of a batch's
                                   keys first; the writer retries the batch one delivery at a
                                   time (also a RuntimeError)

The body is read by the shared toolkit (web.body); `from_web` turns its errors into these.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from web import errors as web_errors


class ReceiverError(Exception):
    """Base of every error raised by the receiver package; `headers` go on its answer."""

    status_code = 500
    code = "error"
    headers: Mapping[str, str] = MappingProxyType({})

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class DeliveryRejectedError(ReceiverError):
    """The sender failed authentication; nothing is archived."""


class UnauthenticatedError(DeliveryRejectedError):
    """401: missing or wrong path token, shared secret or signature."""

    status_code = 401
    code = "unauthenticated"


class ForbiddenSourceError(DeliveryRejectedError):
    """403: the delivering address is not allowed."""

    status_code = 403
    code = "forbidden"


class BodyTimeoutError(DeliveryRejectedError):
    """408: the body had not fully arrived within PAYRECON_BODY_TIMEOUT; nothing is stored."""

    status_code = 408
    code = "body_timeout"
    # Connection: close, as the web toolkit's 408: the rest of a stalled body may never come.
    headers = web_errors.BodyTimeoutError.headers


class DeliveryInvalidError(ReceiverError):
    """The delivery passed authentication but cannot be applied; it is archived."""


class BodyTooLargeError(DeliveryInvalidError):
    """413: the body is larger than PAYRECON_MAX_BODY_BYTES; `head` is what was read of it."""

    status_code = 413
    code = "body_too_large"

    def __init__(self, message: str, head: bytes = b"") -> None:
        super().__init__(message)
        self.head = head


class BodyNotJSONError(DeliveryInvalidError):
    """400: the body is not JSON."""

    status_code = 400
    code = "malformed_json"


class UnsupportedMediaTypeError(DeliveryInvalidError):
    """415: the Content-Type is not application/json."""

    status_code = 415
    code = "unsupported_media_type"


class InvalidEventError(DeliveryInvalidError):
    """422: JSON, but not a valid event; `field` names the offending field."""

    status_code = 422
    code = "invalid_event"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class IngestUnavailableError(ReceiverError):
    """503: the database could not durably take the delivery."""

    status_code = 503
    code = "unavailable"


class BatchRaceError(ReceiverError, RuntimeError):
    """Another transaction wrote one of the batch's keys first; retry the batch per delivery."""


def from_web(exc: web_errors.WebError) -> ReceiverError:
    """The receiver's error for a body-reading error of the web toolkit (408, 413)."""
    if isinstance(exc, web_errors.BodyTooLargeError):
        return BodyTooLargeError(exc.message, head=exc.head)
    if isinstance(exc, web_errors.BodyTimeoutError):
        return BodyTimeoutError(exc.message)
    return BodyNotJSONError(exc.message)
