"""Errors of the admin package and its operator actions: each carries the HTTP answer it gets.

AdminError                      .status_code, .code, .message, .extra (more JSON fields)
├── InvalidError                422 invalid: a value of the request cannot be used; .field
│   ├── ExpectedInputError      a registration of an expected transfer is malformed
│   ├── InvalidLinesError       a statement file with invalid lines (nothing stored); .invalid
│   ├── EndpointBodyError       a relay endpoint's JSON body is malformed
│   ├── AddressRefusedError     400: a relay URL that reaches a place it must not
│   └── UnknownOperatorError    400: an assignee that is no operator's name
├── QueryError                  400 invalid_query: a query-string parameter; .parameter
├── NotFoundError               404 not_found: the thing asked for does not exist
│   └── MissingFindingsError    findings asked for do not exist (nothing was changed); .ids
├── ConflictError               409 conflict: the state of the record forbids the change
├── TooLargeError               413 too_large: an uploaded file over its limit; .limit
├── UnauthenticatedError        401 unauthenticated: no operator's identity was proved
├── ForbiddenError              403 forbidden: the identity may not do this
│   ├── RoleTooLowError         the operator's role is below the route's; .role
│   └── CsrfError               403 csrf_failed: a state-changing request lacks its CSRF token
├── TooManyAttemptsError        429: token guessing from this address; .retry_after
└── UnavailableError            503: something the action needs does not answer or is not set up
    └── LedgerUnavailableError  503 database_unavailable (Retry-After)

Handlers and actions raise them; one exception handler (`admin.answers`) answers each as the
API's JSON error or, for the console and a browser on the reports page, an HTML page. The CLI
catches them and prints one line with its own exit code.
"""

from __future__ import annotations

from typing import Any


class AdminError(Exception):
    """Base of every error raised by the admin package and its actions."""

    status_code = 400
    code = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status_code: int | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status_code is not None:
            self.status_code = status_code
        self.headers = headers or {}
        self.extra = extra


class InvalidError(AdminError):
    """422: a value the operator sent cannot be used; `field` names the culprit."""

    status_code = 422
    code = "invalid"

    def __init__(self, field: str | None, message: str, **kwargs: Any) -> None:
        if field is not None:
            kwargs.setdefault("field", field)
        super().__init__(message, **kwargs)
        self.field = field

    def __str__(self) -> str:
        return self.message if self.field is None else f"{self.field}: {self.message}"


class ExpectedInputError(InvalidError):
    """The registration is malformed; `field` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)


class InvalidLinesError(InvalidError):
    """422: a statement file with invalid lines; nothing was stored. `invalid` lists each
    invalid line's `{line, reason}` (the first ones), `total` how many there were."""

    def __init__(self, message: str, invalid: list[dict[str, object]], total: int) -> None:
        super().__init__("file", message, invalid=invalid, invalid_total=total)
        self.invalid = invalid
        self.total = total

    def __str__(self) -> str:
        return self.message


class EndpointBodyError(InvalidError):
    """A relay endpoint's body cannot be used; `field` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        # The API has always answered this one with the field named in the message too.
        super().__init__(field, f"{field}: {message}")

    def __str__(self) -> str:
        return self.message


class AddressRefusedError(InvalidError):
    """400: a relay URL that resolves to a place destinations may not reach (docs/rules.md:
    Robustness rules, "Relay destinations are not a way into the host")."""

    status_code = 400
    code = "address_refused"

    def __str__(self) -> str:
        return self.message


class UnknownOperatorError(InvalidError):
    """400: a finding was to be assigned to a name no operator has."""

    status_code = 400
    code = "unknown_operator"

    def __init__(self, message: str) -> None:
        super().__init__("assignee", message)

    def __str__(self) -> str:
        return self.message


class QueryError(AdminError):
    """400: a query-string (or path) parameter that cannot be used; `parameter` names it."""

    code = "invalid_query"

    def __init__(self, parameter: str, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("parameter", parameter)
        super().__init__(f"{parameter}: {message}", **kwargs)
        self.parameter = parameter


class NotFoundError(AdminError):
    """404: the finding, endpoint, delivery or record asked for does not exist."""

    status_code = 404
    code = "not_found"


class MissingFindingsError(NotFoundError):
    """Some findings asked for do not exist; the change they were part of is rolled back."""

    def __init__(self, ids: list[int]) -> None:
        super().__init__(f"no finding with id {ids[0]}", ids=ids)
        self.ids = ids


class ConflictError(AdminError):
    """409: the record's state (or a concurrent change) forbids what was asked."""

    status_code = 409
    code = "conflict"


class TooLargeError(AdminError):
    """413: an uploaded file (a statement) is larger than its configured limit."""

    status_code = 413
    code = "too_large"

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message, limit=limit)
        self.limit = limit


class UnauthenticatedError(AdminError):
    """401: the request proved no operator's identity."""

    status_code = 401
    code = "unauthenticated"


class ForbiddenError(AdminError):
    """403: the identity proved may not do this (or the request came from another site)."""

    status_code = 403
    code = "forbidden"


class RoleTooLowError(ForbiddenError):
    """403: the operator's role is below the one the route needs."""

    def __init__(self, role: str) -> None:
        super().__init__(f"this needs the {role} role or higher", role=role)
        self.role = role


class CsrfError(ForbiddenError):
    """A state-changing request made with a session (or a console form) lacks a valid CSRF
    token."""

    code = "csrf_failed"

    def __init__(self, message: str = "a valid CSRF token is required with a session") -> None:
        super().__init__(message)


class TooManyAttemptsError(AdminError):
    """429: too many failed attempts from this address; `retry_after` seconds to wait."""

    status_code = 429
    code = "too_many_attempts"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message, headers={"Retry-After": str(retry_after)})
        self.retry_after = retry_after


class UnavailableError(AdminError):
    """503: the provider or the relay is not configured, or something does not answer."""

    status_code = 503
    code = "unavailable"


class LedgerUnavailableError(UnavailableError):
    """503: the ledger database does not answer; the client may retry."""

    code = "database_unavailable"

    def __init__(self) -> None:
        super().__init__(
            "the ledger database is not answering; try again shortly",
            headers={"Retry-After": "5"},
        )
