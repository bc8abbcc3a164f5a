"""The answers of an admin route when the ledger database does not answer (503), or refuses
what it was given (4xx).

Only a database that does not answer is a 503 "database unavailable": a value it refuses (a NUL
in text on PostgreSQL, an integer past 64 bits) is the caller's input, answered 422, and a
unique key taken by a concurrent request is a 409 (docs/rules.md Robustness rules: "Every route
answers bad input with 4xx").
"""

from __future__ import annotations

from sqlalchemy.exc import (
    DataError,
    IntegrityError,
    InterfaceError,
    InternalError,
    OperationalError,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ledger.errors import DatabaseUnavailableError
from web.answers import RETRY_AFTER, json_error

# What a read or write raises while the database is down, locked, read-only or cannot answer:
# none of these is the caller's fault: 503, as the webhook.
DATABASE_ERRORS = (DatabaseUnavailableError, OperationalError, InterfaceError, InternalError)
# What the database (or the driver before it) raises for a value it cannot take. Routes check
# their input first; these are the net under those checks, answered by `refused_input`.
INPUT_ERRORS = (DataError, IntegrityError, OverflowError)


def database_unavailable() -> JSONResponse:
    """503 while the ledger database does not answer; the client may retry."""
    return json_error(
        503,
        "database_unavailable",
        "the ledger database is not answering; try again shortly",
        headers=RETRY_AFTER,
    )


async def refused_input(request: Request, exc: Exception) -> Response:
    """The app's handler of INPUT_ERRORS: 409 for a key taken meanwhile, else 422."""
    if isinstance(exc, IntegrityError):
        return json_error(409, "conflict", "another request changed the same record; try again")
    return json_error(422, "invalid", "a value in the request cannot be stored or looked up")
