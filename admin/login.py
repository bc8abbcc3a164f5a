"""Console sessions: `POST /login` trades a token for a session cookie, `POST /logout` ends it,
and `GET /console/login` is the sign-in form."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from admin.errors import CsrfError
from admin.identity import (
    PAGE_POLICY,
    SESSION_COOKIE,
    UNKNOWN_OPERATOR,
    Operator,
    checked_csrf,
    csrf_for,
    lookup_token,
    remote_address,
    same_origin,
    session_lifetime,
)
from admin.shell import engine_of
from admin.throttle import LoginThrottle
from admin.unavailable import DATABASE_ERRORS, database_unavailable
from ledger.audit import AuditAction, record
from ledger.db import write_session
from ledger.operators import end_session, secret_hash, start_session
from ledger.queries import iso
from ledger.types import takes_text, utcnow
from web.answers import json_error, web_error
from web.errors import WebError
from web.forms import read_form
from web.templates import environment

HOME = "/console"
LOGIN_PAGE = "/console/login"
_HEADERS = {"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-store"}


def safe_next(target: str | None) -> str:
    """`target` if it is a path on this site, else the console's home (no open redirect)."""
    if not target or not takes_text(target) or not target.startswith("/"):
        return HOME
    # "//evil.example" and "/\\evil.example" are other hosts to a browser; so is anything a
    # browser would read with a scheme or host, or with control characters it strips.
    if target.startswith(("//", "/\\")) or any(ord(c) < 0x20 or c == "\x7f" for c in target):
        return HOME
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return HOME
    return target


def _wants_json(request: Request) -> bool:
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return media == "application/json"


def _login_page(next_path: str, error: str | None, status: int = 200) -> HTMLResponse:
    html = environment().get_template("admin/login.html").render(next=next_path, error=error)
    return HTMLResponse(html, status, headers=_HEADERS)


async def login_page(request: Request) -> Response:
    """`GET /console/login?next=`: the sign-in form (plain HTML, no script)."""
    return _login_page(safe_next(request.query_params.get("next")), None)


def _throttle(request: Request) -> LoginThrottle:
    throttle: LoginThrottle = request.app.state.login_throttle
    return throttle


def _cookie_options(request: Request) -> dict[str, Any]:
    settings = getattr(request.app.state, "settings", None)
    insecure = bool(getattr(settings, "insecure_cookies", False))
    return {"path": "/", "httponly": True, "samesite": "strict", "secure": not insecure}


async def login_form_redirect(request: Request) -> Response:
    """`GET /login` (someone typed the address): 303 to the sign-in page."""
    return RedirectResponse(LOGIN_PAGE, status_code=303)


async def login(request: Request) -> Response:
    """`POST /login` with `token` (form or JSON): a session cookie, then 303 to `next` (a
    form) or 200 with the operator and its CSRF token (JSON)."""
    as_json = _wants_json(request)
    address = remote_address(request) or "unknown"
    wait = _throttle(request).retry_after(address)
    if wait is not None:
        message = "too many failed logins from this address; try again later"
        if as_json:
            return json_error(429, "too_many_attempts", message, headers={"Retry-After": str(wait)})
        page = _login_page(HOME, message, 429)
        page.headers["Retry-After"] = str(wait)
        return page
    if not same_origin(request):
        return json_error(403, "forbidden", "cross-origin request refused")
    try:
        form = await read_form(request)
    except WebError as exc:
        return web_error(exc)
    token = form.get("token", "")
    next_path = safe_next(form.get("next"))
    operator = None
    if token and takes_text(token):
        try:
            operator = await run_in_threadpool(lookup_token, request, token)
        except DATABASE_ERRORS:
            return database_unavailable()
    try:
        if operator is None:
            _throttle(request).failed(address)
            await run_in_threadpool(_record_failure, request)
        else:
            session_id, expires = await run_in_threadpool(_open_session, request, operator, token)
    except DATABASE_ERRORS:
        return database_unavailable()
    if operator is None:
        if as_json:
            return json_error(401, "unauthenticated", "that token belongs to no operator")
        return _login_page(next_path, "That token belongs to no operator.", 401)
    options = _cookie_options(request)
    max_age = int(session_lifetime(request).total_seconds())
    answer: Response
    if as_json:
        answer = JSONResponse(
            {
                "operator": operator.name,
                "role": operator.role.value,
                "csrf_token": csrf_for(session_id),
                "expires_at": expires,
            }
        )
    else:
        answer = RedirectResponse(next_path, status_code=303)
    answer.set_cookie(SESSION_COOKIE, session_id, max_age=max_age, **options)
    return answer


def _record_failure(request: Request) -> None:
    with write_session(engine_of(request)) as session:
        record(
            session,
            operator=UNKNOWN_OPERATOR,
            role="none",
            action=AuditAction.LOGIN_FAILED,
            subject=None,
            detail=None,
            remote_addr=remote_address(request),
            now=utcnow(),
        )


def _open_session(request: Request, operator: Operator, token: str) -> tuple[str, str]:
    now = utcnow()
    with write_session(engine_of(request)) as session:
        grant = start_session(
            session,
            operator=operator.name,
            role=operator.role.value,
            credential_hash=secret_hash(token),
            now=now,
            lifetime=session_lifetime(request),
        )
        record(
            session,
            operator=operator.name,
            role=operator.role.value,
            action=AuditAction.LOGIN,
            subject=f"operator:{operator.name}",
            detail=None,
            remote_addr=remote_address(request),
            now=now,
        )
    return grant.session_id, iso(grant.expires_at) or ""


async def logout(request: Request) -> Response:
    """`POST /logout` with the session cookie and its CSRF token: the session ends at once."""
    session_id = request.cookies.get(SESSION_COOKIE)
    as_json = _wants_json(request)
    if not session_id:
        return json_error(401, "unauthenticated", "no session to end")
    if not same_origin(request):
        return json_error(403, "forbidden", "cross-origin request refused")
    try:
        request = await checked_csrf(request, csrf_for(session_id))
    except CsrfError:
        return json_error(403, "csrf_failed", "a valid CSRF token is required to log out")
    except WebError as exc:
        return web_error(exc)

    def end() -> None:
        now = utcnow()
        with write_session(engine_of(request)) as session:
            ended = end_session(session, session_id, now=now)
            if ended is not None:
                record(
                    session,
                    operator=ended.operator,
                    role=ended.role,
                    action=AuditAction.LOGOUT,
                    subject=f"operator:{ended.operator}",
                    detail=None,
                    remote_addr=remote_address(request),
                    now=now,
                )

    try:
        await run_in_threadpool(end)
    except DATABASE_ERRORS:
        return database_unavailable()
    answer: Response = (
        JSONResponse({"status": "logged_out"})
        if as_json
        else RedirectResponse(LOGIN_PAGE, status_code=303)
    )
    answer.delete_cookie(SESSION_COOKIE, **_cookie_options(request))
    return answer
