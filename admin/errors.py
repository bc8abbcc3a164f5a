"""Errors of the admin package: input an operator sent that cannot be used.

AdminError
├── ExpectedInputError     a registration of an expected transfer is malformed; .field
├── EndpointBodyError      a relay endpoint's JSON body is malformed; .field
├── QueryError             a query-string parameter cannot be used; .parameter
└── CsrfError              a state-changing request lacks the CSRF token of its session

Each is answered as a JSON error by the route that parsed the input (422 and 400; CsrfError
403); the CLI, which registers transfers too, prints it.
"""

from __future__ import annotations


class AdminError(Exception):
    """Base of every error raised by the admin package."""


class ExpectedInputError(AdminError):
    """The registration is malformed; `field` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class EndpointBodyError(AdminError):
    """A relay endpoint's body cannot be used; `field` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class QueryError(AdminError):
    """A query-string parameter that cannot be used; `parameter` names it."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(f"{parameter}: {message}")
        self.parameter = parameter


class CsrfError(AdminError):
    """A state-changing request made with a session (or a console form) lacks a valid CSRF
    token."""
