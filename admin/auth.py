"""The admin token check for `/api/*` and `/reports` (Bearer, or Basic for browsers)."""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from receiver.answers import json_error

Handler = Callable[[Request], Awaitable[Response]]


def _presented(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer":
        return value.strip()
    if scheme.lower() == "basic":
        # A browser shows its own prompt for Basic; the password is the admin token.
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2]
    return None


def _same_origin(request: Request) -> bool:
    # A browser caches Basic credentials, so a form POST from another site would carry them:
    # state-changing requests must come from our own pages (or from a non-browser client).
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin.split("://", 1)[-1] == request.headers.get("host", "")


def admin_only(handler: Handler) -> Handler:
    """Wrap a handler so it runs only for the admin token; 403 when no token is configured."""

    async def guarded(request: Request) -> Response:
        token: str | None = request.app.state.admin_token
        if token is None:
            return json_error(
                403, "forbidden", "admin routes are disabled: set PAYRECON_ADMIN_TOKEN"
            )
        presented = _presented(request)
        if presented is None or not hmac.compare_digest(presented.encode(), token.encode()):
            return json_error(
                401,
                "unauthenticated",
                "admin token required",
                headers={"WWW-Authenticate": 'Bearer, Basic realm="payrecon", charset="UTF-8"'},
            )
        if request.method not in {"GET", "HEAD"} and not _same_origin(request):
            return json_error(403, "forbidden", "cross-origin request refused")
        return await handler(request)

    guarded.__name__ = getattr(handler, "__name__", "guarded")
    guarded.__doc__ = handler.__doc__
    return guarded
