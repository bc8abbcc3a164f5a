"""Errors of the web toolkit: a request that cannot be read or parsed; each carries the HTTP
status it is answered with.

WebError
├── BodyTimeoutError       408: the body did not arrive within PAYRECON_BODY_TIMEOUT
├── BodyTooLargeError      413: the body is over the route's limit; .head is what was read
├── MalformedBodyError     400: not JSON, nested too deeply, or not a form
│   └── MalformedFormError 400 (bad_request): not the multipart form it says it is
└── UnsupportedMediaError  415: a Content-Type the route does not read
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


class WebError(Exception):
    """Base of every error raised by the web package; `headers` go on its answer."""

    status_code = 400
    code = "bad_request"
    headers: Mapping[str, str] = MappingProxyType({})

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BodyTimeoutError(WebError):
    """408: the body had not fully arrived within the deadline; nothing of it is used."""

    status_code = 408
    code = "body_timeout"
    # The rest of a stalled body may never come: the answer closes the connection rather than
    # leave it to the server's keep-alive timeout (the receiver's own 408 does the same).
    headers = MappingProxyType({"Connection": "close"})


class BodyTooLargeError(WebError):
    """413: the body is larger than the route takes; `head` is what was read of it."""

    status_code = 413
    code = "body_too_large"

    def __init__(self, message: str, head: bytes = b"") -> None:
        super().__init__(message)
        self.head = head


class MalformedBodyError(WebError):
    """400: the body is not JSON (or not a form), or is built to hurt its parser."""

    status_code = 400
    code = "malformed_json"


class MalformedFormError(MalformedBodyError):
    """400: the body is not the multipart form its Content-Type says (answered as a plain
    bad request: it is not JSON that is wrong)."""

    code = "bad_request"


class UnsupportedMediaError(WebError):
    """415: the Content-Type is not one the route reads."""

    status_code = 415
    code = "unsupported_media_type"
