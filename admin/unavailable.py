"""The answer of an admin route while the ledger database does not answer."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError
from starlette.responses import JSONResponse

from ledger.errors import DatabaseUnavailableError
from web.answers import RETRY_AFTER, json_error

# What a read or write raises while the database is down or cannot answer. Input is checked
# before the database sees it, so none of these is the caller's fault: 503, as the webhook.
DATABASE_ERRORS = (DatabaseUnavailableError, DBAPIError)


def database_unavailable() -> JSONResponse:
    """503 while the ledger database does not answer; the client may retry."""
    return json_error(
        503,
        "database_unavailable",
        "the ledger database is not answering; try again shortly",
        headers=RETRY_AFTER,
    )
