"""Errors of the admin package: input an operator sent that cannot be used.

AdminError
├── ExpectedInputError     a registration of an expected transfer is malformed; .field
├── EndpointBodyError      a relay endpoint's JSON body is malformed; .field
├── QueryError             a query-string parameter cannot be used; .parameter
├── MissingFindingsError   findings asked for do not exist (nothing was changed); .ids
├── UnknownOperatorError   an assignee that is no operator's name
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


class MissingFindingsError(AdminError):
    """Some findings asked for do not exist; the change they were part of is rolled back."""

    def __init__(self, ids: list[int]) -> None:
        super().__init__(f"no finding with id {ids[0]}")
        self.ids = ids


class UnknownOperatorError(AdminError):
    """A finding was to be assigned to a name no operator has."""


class CsrfError(AdminError):
    """A state-changing request made with a session (or a console form) lacks a valid CSRF
    token."""
