"""Who is asking: operators, roles, sessions and CSRF, resolved once per request.

A request proves an identity with a token (`Authorization: Bearer`, or a Basic password) or a
console session cookie. `requires(role)` guards JSON routes and `page(role)` console pages;
`admin.routes` declares every route with its role in one table.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime as dt
import hashlib
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, Response
from starlette.types import Message

from admin.actions.actor import Actor, Role
from admin.actions.actor import audit as record_action
from admin.answers import CHALLENGE, PAGE_POLICY, Surface, admin_error, login_redirect
from admin.errors import (
    AdminError,
    CsrfError,
    ForbiddenError,
    LedgerUnavailableError,
    RoleTooLowError,
    TooManyAttemptsError,
    UnauthenticatedError,
)
from admin.shell import engine_of
from admin.throttle import LoginThrottle
from admin.unavailable import DATABASE_ERRORS
from ledger.audit import AuditAction, record
from ledger.db import read_session, write_session
from ledger.operators import bound_to, live_session, operator_by_token, secret_hash
from ledger.types import utcnow
from web.address import request_address
from web.body import body_deadline
from web.errors import BodyTimeoutError, WebError
from web.forms import FORM, media_type, read_form_fields
from web.templates import error_page
from web.upload import MULTIPART, first_field

__all__ = ["PAGE_POLICY", "Actor", "Operator", "Role", "Surface", "login_redirect"]

Handler = Callable[[Request], Awaitable[Response]]

SESSION_COOKIE = "payrecon_session"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
MAX_FORM_BYTES = 64 * 1024
ADMIN_NAME = "admin"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Who a failed authentication is filed under in the audit log: the token matched no one.
UNKNOWN_OPERATOR = "unknown"
_TOO_MANY = "too many failed attempts from this address; try again later"


# The operator a request proved is the actor of what it does (admin.actions.actor).
Operator = Actor


@dataclass(frozen=True)
class Identity:
    """An operator and the secret it proved itself with (bound into its CSRF token)."""

    operator: Operator
    secret: str
    by_session: bool


def _presented(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer":
        return value.strip() or None
    if scheme.lower() == "basic":
        # A browser shows its own prompt for Basic; the password is the token.
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2] or None
    return None


def same_origin(request: Request) -> bool:
    """False when a browser says the request comes from another site's page."""
    # A browser caches Basic credentials, so a form POST from another site would carry them:
    # state-changing requests must come from our own pages (or from a non-browser client).
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin.split("://", 1)[-1] == request.headers.get("host", "")


def _admin_token(request: Request) -> str | None:
    token: str | None = getattr(request.app.state, "admin_token", None)
    return token


def lookup_token(request: Request, token: str) -> Operator | None:
    """The operator a token belongs to (the admin token, or an active operator's), or None."""
    admin = _admin_token(request)
    if admin is not None and hmac.compare_digest(token.encode(), admin.encode()):
        return Operator(ADMIN_NAME, Role.ADMIN)
    with read_session(engine_of(request)) as session:
        account = operator_by_token(session, token)
    return None if account is None else Operator(account.name, Role(account.role))


def _lookup_session(request: Request, session_id: str) -> Operator | None:
    with read_session(engine_of(request)) as session:
        row = live_session(session, session_id, now=utcnow())
    if row is None:
        return None
    if row.operator == ADMIN_NAME:
        admin = _admin_token(request)
        if admin is None or not bound_to(session_id, secret_hash(admin)):
            # The bootstrap admin was switched off, or PAYRECON_ADMIN_TOKEN changed: the
            # sessions the old token opened end with it.
            return None
    return Operator(row.operator, Role(row.role))


async def identify(request: Request) -> Identity | None:
    """The identity the request proves (a token first, then the session cookie), or None."""
    token = _presented(request)
    if token is not None:
        found = await run_in_threadpool(lookup_token, request, token)
        return None if found is None else Identity(found, token, by_session=False)
    session_id = request.cookies.get(SESSION_COOKIE)
    if session_id:
        found = await run_in_threadpool(_lookup_session, request, session_id)
        return None if found is None else Identity(found, session_id, by_session=True)
    return None


def csrf_for(secret: str) -> str:
    """The CSRF token bound to a session id or token: an HMAC keyed by that secret, so only
    its holder can compute it and a new session gets a new one."""
    return hmac.new(secret.encode(), b"payrecon csrf v1", hashlib.sha256).hexdigest()


def current_operator(request: Request) -> Operator:
    """The operator `requires`/`page` resolved for this request."""
    operator: Operator = request.state.operator
    return operator


def csrf_token(request: Request) -> str:
    """The CSRF token for this request's identity (for `<input name="csrf_token">`)."""
    token: str = request.state.csrf_token
    return token


def remote_address(request: Request) -> str | None:
    """The caller's address, believing X-Forwarded-For (all its lines) only from a trusted
    proxy: the same reading as the webhook's (web.address)."""
    settings = getattr(request.app.state, "settings", None)
    trusted = frozenset(getattr(settings, "trusted_proxies", None) or ())
    return request_address(request, trusted)


def audit(
    request: Request,
    session: Session,
    action: str,
    subject: str | None,
    detail: str | None = None,
) -> None:
    """Record `action` by this request's operator in `session`'s transaction."""
    record_action(session, current_operator(request), action, subject, detail, now=utcnow())


async def checked_csrf(request: Request, expected: str) -> Request:
    """`request` (rebuilt if its body had to be read) when it carries `expected` in the
    X-CSRF-Token header or the form field `csrf_token`; else CsrfError.

    A form body that is late or too large raises the toolkit's WebError (408, 413)."""
    presented = request.headers.get(CSRF_HEADER)
    if presented is None and media_type(request) == MULTIPART:
        # An upload form carries its token as its first field (web.upload): only that
        # much is read here, the file streams on to the handler.
        timeout = body_deadline(request).timeout
        try:
            async with asyncio.timeout(timeout):
                head, ended, name, value = await first_field(
                    request.receive, request.headers.get("content-type", "")
                )
        except TimeoutError:
            raise BodyTimeoutError(f"the body did not arrive within {timeout:g} seconds") from None
        except (ClientDisconnect, WebError):
            raise CsrfError from None
        presented = value if name == CSRF_FIELD else None
        request = _replayed(request, head, ended=ended)
    elif presented is None:
        if media_type(request) != FORM:
            raise CsrfError
        try:
            body, fields = await read_form_fields(request, limit=MAX_FORM_BYTES)
        except ClientDisconnect:
            raise CsrfError from None
        except WebError as exc:
            if exc.status_code in (408, 413):
                raise
            raise CsrfError from None
        values = fields.get(CSRF_FIELD)
        presented = values[-1] if values else None
        request = _replayed(request, body)
    if presented is None or not hmac.compare_digest(presented.encode(), expected.encode()):
        raise CsrfError
    return request


def _replayed(request: Request, body: bytes, *, ended: bool = True) -> Request:
    # The handler reads the body again from `receive`: hand it the bytes already read (and,
    # when they are only its start, the rest as it arrives).
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await request.receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": not ended}

    return Request(request.scope, receive)


def _named(wrapper: Handler, handler: Handler) -> Handler:
    wrapper.__name__ = getattr(handler, "__name__", "guarded")
    wrapper.__doc__ = handler.__doc__
    wrapper.__wrapped__ = handler  # type: ignore[attr-defined]
    return wrapper


def _settle(request: Request, identity: Identity) -> None:
    operator = identity.operator
    request.state.operator = Actor(operator.name, operator.role, remote_address(request))
    request.state.csrf_token = csrf_for(identity.secret)


def _throttle(request: Request) -> LoginThrottle | None:
    throttle: LoginThrottle | None = getattr(request.app.state, "login_throttle", None)
    return throttle


def _tries_a_token(request: Request) -> bool:
    scheme = request.headers.get("authorization", "").partition(" ")[0].lower()
    return scheme in ("bearer", "basic")


def _record_auth_failure(request: Request) -> None:
    # Who tried is unknown, and the token tried is never written anywhere.
    with write_session(engine_of(request)) as session:
        record(
            session,
            operator=UNKNOWN_OPERATOR,
            role="none",
            action=AuditAction.AUTH_FAILED,
            subject=None,
            detail=f"{request.method} {request.url.path}"[:200],
            remote_addr=remote_address(request),
            now=utcnow(),
        )


async def _admit(request: Request, role: Role, *, csrf_always: bool) -> Request:
    """The request to hand on (with its operator set); a typed error (admin.errors) when it
    is refused. `csrf_always`: console forms always carry the token (a browser may also hold
    Basic credentials); API calls need it only when the cookie is what proves who they are."""
    # Bearer/Basic guessing counts in the login throttle and is audited, as a failed
    # `POST /login` is (docs/rules.md Robustness rules: "Guessing is throttled and seen").
    throttle = _throttle(request) if _tries_a_token(request) else None
    address = remote_address(request) or "unknown"
    if throttle is not None and (wait := throttle.retry_after(address)) is not None:
        raise TooManyAttemptsError(_TOO_MANY, wait)
    try:
        identity = await identify(request)
        if identity is None and throttle is not None:
            throttle.failed(address)
            await run_in_threadpool(_record_auth_failure, request)
    except DATABASE_ERRORS:
        # Operator tokens and sessions live in the ledger: no answer from it is a 503 the
        # client may retry, never a 500 (the admin token alone needs no database).
        raise LedgerUnavailableError from None
    if identity is None:
        if _admin_token(request) is None and _presented(request) is not None:
            raise ForbiddenError("not an operator's token (and PAYRECON_ADMIN_TOKEN is unset)")
        raise UnauthenticatedError("an operator's token is required", headers=CHALLENGE)
    if not identity.operator.role.allows(role):
        raise RoleTooLowError(role.value)
    if request.method not in SAFE_METHODS:
        if not same_origin(request):
            raise ForbiddenError("cross-origin request refused")
        if identity.by_session or csrf_always:
            request = await checked_csrf(request, csrf_for(identity.secret))
    _settle(request, identity)
    return request


def _guard(role: Role, surface: Callable[[Request], Surface]) -> Callable[[Handler], Handler]:
    def wrap(handler: Handler) -> Handler:
        async def guarded(request: Request) -> Response:
            chosen = surface(request)
            request.state.surface = chosen
            try:
                admitted = await _admit(request, role, csrf_always=chosen is Surface.CONSOLE)
                return await handler(admitted)
            except (AdminError, WebError) as exc:
                # The one answer of a typed error (admin.answers), whichever app mounts the
                # route; the app registers the same handler for the routes without a guard.
                return await admin_error(request, exc)

        return _named(guarded, handler)

    return wrap


def requires(role: Role) -> Callable[[Handler], Handler]:
    """Guard a JSON route: 401 without a known identity, 403 below `role`, and for a
    state-changing request 403 cross-origin or (with a session cookie) without its CSRF token.
    Sets `request.state.operator`."""
    return _guard(role, lambda request: Surface.API)


def html_refusal(
    status: int,
    title: str,
    message: str,
    *,
    link: str | None = None,
    link_text: str = "Back to the console",
) -> HTMLResponse:
    """A small self-contained HTML page (web/templates/error.html) for a refused request."""
    page = error_page(
        title, message, link="/console" if link is None else link, link_text=link_text
    )
    headers = {"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-store"}
    return HTMLResponse(page, status, headers=headers)


def page(role: Role) -> Callable[[Handler], Handler]:
    """Guard a console page: 303 to the login page without an identity, a 403 page below
    `role`, and a POST needs the form field `csrf_token` (403 page without a valid one).
    Sets `request.state.operator`."""
    return _guard(role, lambda request: Surface.CONSOLE)


def wants_html(request: Request) -> bool:
    """True when the client is a browser asking for a page (its Accept names text/html)."""
    return "text/html" in request.headers.get("accept", "").lower()


def report_page(role: Role) -> Callable[[Handler], Handler]:
    """Guard the reports page and its forms: refusals as the API's JSON for a client, as small
    HTML pages for a browser (`wants_html`), so a person never sees raw JSON. Otherwise as
    `requires`. Sets `request.state.operator`."""
    return _guard(role, lambda request: Surface.REPORT if wants_html(request) else Surface.API)


def session_lifetime(request: Request) -> dt.timedelta:
    """How long a console session lasts (PAYRECON_SESSION_HOURS, 8 by default)."""
    settings = getattr(request.app.state, "settings", None)
    return dt.timedelta(hours=float(getattr(settings, "session_hours", 8)))
