"""The one exception handler of the operators' routes: a typed error (admin.errors, or the web
toolkit's) becomes the API's JSON error, or an HTML page for the console and for a browser on
the reports page (`request.state.surface`, set by the route's guard in admin.identity).
"""

from __future__ import annotations

import enum
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from admin.errors import (
    AdminError,
    CsrfError,
    ForbiddenError,
    RoleTooLowError,
    TooManyAttemptsError,
    UnauthenticatedError,
    UnavailableError,
)
from web.answers import json_error, web_error
from web.errors import WebError
from web.templates import error_page

# Pages are self-contained: no script, styles inline, forms only back to us.
PAGE_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
CHALLENGE = {"WWW-Authenticate": 'Bearer, Basic realm="payrecon", charset="UTF-8"'}


class Surface(enum.StrEnum):
    """Which kind of answer a refused or failed request gets (admin.answers)."""

    API = "api"  # JSON errors
    CONSOLE = "console"  # HTML pages; no identity is a redirect to the sign-in page
    REPORT = "report"  # HTML pages; no identity is 401 with the challenge (scripts use it too)


def login_redirect(request: Request) -> RedirectResponse:
    """303 to the login page, coming back to this page after."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/console/login?next={quote(target, safe='')}", status_code=303)


# Set by a handler of the reports page's forms: what was refused ("acknowledge this finding"),
# so the page's title says so and its link leads back to the report.
REFUSED = "refused"


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:]).rstrip(".") + "."


def _plain(text: str) -> str:
    return text.strip()


def _page_text(exc: AdminError | WebError, surface: Surface) -> tuple[str, str]:
    """The title and the sentence a person reads (the reports page shows the message as the
    API words it; the console's pages, as a sentence)."""
    text = _sentence if surface is Surface.CONSOLE else _plain
    if isinstance(exc, WebError):
        return "Form not received", text(exc.message)
    if isinstance(exc, CsrfError):
        return "Form expired", "The form had no valid CSRF token: reload the page."
    if isinstance(exc, RoleTooLowError):
        noun = "page" if surface is Surface.CONSOLE else ""
        return "Not allowed", f"This {noun or 'action'} needs the {exc.role} role or higher."
    if isinstance(exc, ForbiddenError):
        if exc.message == "cross-origin request refused":
            return "Refused", "A form from another site was refused."
        return "Not allowed", text(exc.message)
    if isinstance(exc, TooManyAttemptsError):
        return "Too many attempts", text(exc.message)
    if isinstance(exc, UnauthenticatedError):
        return "Sign in", "This page needs an operator's token."
    if isinstance(exc, UnavailableError):
        title = "Ledger unavailable" if surface is Surface.CONSOLE else "Report unavailable"
        return title, text(exc.message)
    if surface is Surface.REPORT:
        return "Cannot show this report", text(exc.message)
    return {404: "Not found"}.get(exc.status_code, "Cannot do this"), text(exc.message)


def _here(request: Request) -> str:
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def _link(request: Request, exc: AdminError | WebError, surface: Surface) -> tuple[str, str]:
    """Where the page's one link leads, and its words."""
    refused = getattr(request.state, REFUSED, None)
    if surface is Surface.REPORT:
        if isinstance(exc, UnauthenticatedError):
            return f"/console/login?next={quote(_here(request), safe='')}", "Sign in"
        if refused is not None:
            return refused[1], "Back to the report"
        if isinstance(exc, UnavailableError):
            return _here(request), "Try again"
        if isinstance(exc, ForbiddenError | TooManyAttemptsError):
            return "/reports", "Back to the report"
        return request.url.path, "Show the whole ledger"
    if isinstance(exc, UnavailableError):
        return "", "Try again"
    return "/console", "Back to the console"


def html_answer(request: Request, exc: AdminError | WebError, surface: Surface) -> Response:
    """The HTML page answering `exc` (a console page's or the reports page's)."""
    if surface is Surface.CONSOLE and isinstance(exc, UnauthenticatedError):
        return login_redirect(request)
    title, message = _page_text(exc, surface)
    refused = getattr(request.state, REFUSED, None)
    if refused is not None:
        title = f"Cannot {refused[0]}"
    link, link_text = _link(request, exc, surface)
    headers = {"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-store"}
    headers.update(getattr(exc, "headers", None) or {})
    if isinstance(exc, UnauthenticatedError):
        headers.update(CHALLENGE)
    page = error_page(title, message, link=link, link_text=link_text)
    return HTMLResponse(page, exc.status_code, headers=headers)


def json_answer(exc: AdminError | WebError) -> Response:
    """The API's JSON error for `exc`."""
    if isinstance(exc, WebError):
        return web_error(exc)
    return json_error(exc.status_code, exc.code, exc.message, headers=exc.headers, **exc.extra)


async def admin_error(request: Request, exc: Exception) -> Response:
    """The app's handler of AdminError and WebError: JSON or an HTML page by the route's
    surface."""
    assert isinstance(exc, AdminError | WebError)
    surface = Surface(getattr(request.state, "surface", Surface.API))
    if surface is Surface.API:
        return json_answer(exc)
    return html_answer(request, exc, surface)


# The app's exception handlers of the operators' routes (payrecon.app).
EXCEPTION_HANDLERS = {AdminError: admin_error, WebError: admin_error}
