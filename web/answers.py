"""JSON error answers: the one shape every error the service sends takes.

`{"status": "error", "error": <code>, "message": <text>, ...}` (docs/rules.md: Receiver HTTP
interface), for the webhook, the router's own 404 and 405, and the operators' routes in
`admin/`; both import it from this toolkit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from web.errors import WebError

# Seconds a client should wait before retrying while the ledger does not take writes.
RETRY_AFTER = {"Retry-After": "5"}


def json_error(
    status: int,
    error: str,
    message: str,
    *,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """A JSON error answer: `error` is the machine-readable code, `extra` adds fields."""
    content = {"status": "error", "error": error, "message": message, **extra}
    return JSONResponse(content, status, headers=headers)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's HTTPException (the router's 404 and 405) as a JSON error."""
    assert isinstance(exc, HTTPException)
    message = {404: "Not Found", 405: "Method Not Allowed"}.get(exc.status_code, exc.detail)
    return json_error(
        exc.status_code, message.lower().replace(" ", "_"), message, headers=exc.headers
    )


def web_error(exc: WebError) -> JSONResponse:
    """The JSON error answer for a request the toolkit could not read (408, 413, 400, 415)."""
    return json_error(exc.status_code, exc.code, exc.message, headers=exc.headers)
