"""The one boundary where httpx failures and provider answers become `provider.errors`."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import httpx
from pydantic import ValidationError

from provider.errors import (
    AccessDeniedError,
    AccountNotFoundError,
    AuthenticationError,
    DuplicateReferenceError,
    EnquiryFailedError,
    ForeignAnswerError,
    InsufficientFundsError,
    InvalidBankCodeError,
    IPNotAllowedError,
    IPWhitelistEmptyError,
    NotFoundError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    ProviderValidationError,
    RateLimitedError,
    TransferRejectedError,
    UnexpectedResponseError,
    WebhookNotConfiguredError,
)
from provider.models import storable_text
from provider.retry import parse_retry_after

T = TypeVar("T")
Scrub = Callable[[str], str]

# The spec names refusals by their text, without codes or status codes (spec,
# Errors), so the text decides; matching ignores case and a final full stop.
_REFUSALS: dict[str, type[TransferRejectedError]] = {
    "insufficient funds": InsufficientFundsError,
    "duplicate reference": DuplicateReferenceError,
    "invalid bank code": InvalidBankCodeError,
    "account not found": AccountNotFoundError,
    "webhook not configured": WebhookNotConfiguredError,
}
_DENIALS: dict[str, type[AccessDeniedError]] = {
    "access denied. your ip address is not allowed": IPNotAllowedError,
    "access denied. ip whitelisting is enabled but no ip addresses are configured": (
        IPWhitelistEmptyError
    ),
}
_ENQUIRY_FAILED = "account name enquiry failed"
_UNAUTHENTICATED = "unauthenticated"


def _normal(message: str) -> str:
    return message.strip().rstrip(".").casefold()


@contextlib.contextmanager
def translated(scrub: Scrub, timeout: float) -> Iterator[None]:
    """Turn any httpx failure raised inside the block into a ProviderError."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise ProviderTimeoutError(f"no answer from the provider within {timeout:g}s") from exc
    except httpx.DecodingError as exc:
        raise UnexpectedResponseError(f"undecodable answer: {scrub(str(exc))}") from exc
    except httpx.HTTPError as exc:
        detail = scrub(str(exc)) or type(exc).__name__
        raise ProviderUnavailableError(f"cannot reach the provider: {detail}") from exc


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def by_message(message: str, status_code: int) -> ProviderError | None:
    """The error a known refusal text stands for, whatever the status code, or None."""
    key = _normal(message)
    if key in _REFUSALS:
        return _REFUSALS[key](message, status_code=status_code)
    if key in _DENIALS:
        return _DENIALS[key](message, status_code=status_code)
    if key == _ENQUIRY_FAILED:
        return EnquiryFailedError(message, status_code=status_code)
    if key == _UNAUTHENTICATED:
        return AuthenticationError(
            "the provider refused the secret key (Unauthenticated)", status_code=status_code
        )
    return None


def is_envelope(payload: Any, status: int) -> bool:
    """Whether a body is in the provider's format (spec: every body is its JSON envelope).

    A success is `{"status": "success", …}`; a refusal `{"status": "failed", "message": …}`,
    except the whitelisting 403, whose body the spec gives as `message` only.
    """
    if not isinstance(payload, dict):
        return False
    state = payload.get("status")
    if 200 <= status < 300 and state == "success":
        return True
    if not isinstance(payload.get("message"), str):
        return False
    return state == "failed" or (status == 403 and state is None)


def _shown_url(request: httpx.Request) -> str:
    # Scheme, host, port and path: never credentials in the base URL, nor the query.
    url = request.url
    port = f":{url.port}" if url.port is not None else ""
    return f"{request.method} {url.scheme}://{url.host}{port}{url.path}"


def foreign(response: httpx.Response, payload: Any, text: str, scrub: Scrub) -> ForeignAnswerError:
    """The error for an answer that is not the provider's (a wrong base URL, a proxy page)."""
    status = response.status_code
    try:
        answered = _shown_url(response.request)
    except RuntimeError:  # a response built by hand, never sent
        answered = "the provider URL"
    if 300 <= status < 400:
        location = scrub(response.headers.get("location", ""))[:200]
        what = f"a redirect to {location!r}" if location else "a redirect"
    elif isinstance(payload, dict | list):
        what = "JSON that is not the provider's envelope"
    else:
        kind = response.headers.get("content-type", "").split(";")[0].strip() or "untyped"
        what = f"a {kind} body, not the provider's JSON"
    return ForeignAnswerError(
        f"{scrub(answered)} answered {status} with {what}",
        url=scrub(answered),
        body=text,
        status_code=status,
    )


# Statuses whose meaning does not hang on the body: a 5xx, 408 or 429 may come from a
# proxy in front of the provider, a 401 is the key's refusal whoever says it (spec,
# Authentication 6), and the spec does not show the 422 body.
_BODY_FREE = frozenset({401, 408, 422, 429})


def failure(response: httpx.Response, payload: Any, text: str, scrub: Scrub) -> ProviderError:
    """The error an unsuccessful answer stands for."""
    status = response.status_code
    message = payload.get("message") if isinstance(payload, dict) else None
    # Its text may end up in the ledger (a refused payout's reason), so it is made storable.
    message = storable_text(message) if isinstance(message, str) and message.strip() else None
    if status >= 500:
        # Whatever a 5xx says, it is not a clean refusal: the outcome is unknown.
        return ProviderUnavailableError(f"the provider answered {status}", status_code=status)
    if 300 <= status < 400 or (
        status not in _BODY_FREE and status < 500 and not is_envelope(payload, status)
    ):
        # A redirect, or a 404 page of another server, is not the provider speaking: never
        # "not found" (docs/rules.md, Provider misconfiguration).
        return foreign(response, payload, text, scrub)
    if message is not None:
        mapped = by_message(message, status)
        if mapped is not None:
            return mapped
    if status == 401:
        return AuthenticationError("the provider refused the secret key", status_code=status)
    if status == 403:
        return AccessDeniedError(message or "access denied", status_code=status)
    if status == 404:
        return NotFoundError(message or "not found", status_code=status)
    if status == 408:
        return ProviderTimeoutError("the provider timed out the request", status_code=status)
    if status == 422:
        errors = payload.get("errors", payload) if isinstance(payload, dict) else text
        return ProviderValidationError(message or "validation failed", errors=errors)
    if status == 429:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        return RateLimitedError("rate limited by the provider", retry_after=retry_after)
    detail = f": {message}" if message else ""
    return UnexpectedResponseError(
        f"unexpected answer {status}{detail}", body=text, status_code=status
    )


def interpret(response: httpx.Response, parse: Callable[[dict[str, Any]], T], scrub: Scrub) -> T:
    """The typed result of a successful answer, or the mapped error of any other."""
    text = scrub(response.text)
    payload = _decode(text)
    status = response.status_code
    if not 200 <= status < 300:
        raise failure(response, payload, text, scrub)
    if not isinstance(payload, dict) or payload.get("status") not in ("success", "failed"):
        # An HTML page or another service's JSON with a 200: not the provider speaking.
        raise foreign(response, payload, text, scrub)
    if payload.get("status") == "failed":
        # The spec shows the failed enquiry's body without its status code; a 2xx
        # carrying a known refusal is still that refusal.
        message = payload.get("message")
        mapped = by_message(message, status) if isinstance(message, str) else None
        if mapped is not None:
            raise mapped
    if payload.get("status") != "success" or "data" not in payload:
        raise UnexpectedResponseError(
            "answer is not the success envelope", body=text, status_code=status
        )
    try:
        return parse(payload)
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
        raise UnexpectedResponseError(
            f"answer has missing or ill-typed fields: {_summary(exc)}",
            body=text,
            status_code=status,
        ) from exc


def _summary(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = [
            f"{'.'.join(str(p) for p in err['loc']) or 'data'}: {err['msg']}"
            for err in exc.errors()[:3]
        ]
        return "; ".join(parts)
    return type(exc).__name__
