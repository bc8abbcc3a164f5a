"""Sessions: login, cookie flags, CSRF, logout and revocation, the login throttle."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, update
from sqlmodel import col

from ledger.audit import AuditAction
from ledger.db import write_session
from ledger.models import OperatorAccount
from ledger.operators import revoke_operator, secret_hash
from ledger.types import utcnow
from payrecon.cli import cli
from tests.integration.admin.conftest import ADMIN, Cast, StartCast, audit_rows, bearer

JSON = {"content-type": "application/json"}


@contextlib.contextmanager
def _login(url: str, token: str) -> Iterator[tuple[httpx.Client, str]]:
    """A client holding a new session's cookie, and that session's CSRF token."""
    with httpx.Client(base_url=url, timeout=30) as client:
        answer = client.post("/login", json={"token": token})
        assert answer.status_code == 200, answer.text
        yield client, answer.json()["csrf_token"]


def test_a_form_login_sets_the_cookie_with_its_flags_and_goes_to_next(
    start_cast: StartCast,
) -> None:
    """The session cookie is HttpOnly, SameSite=Strict, Secure, 8 hours, path /; 303 to next."""
    with start_cast(insecure_cookies=False) as cast:
        answer = httpx.post(
            f"{cast.url}/login",
            data={"token": cast.tokens["finance"], "next": "/reports?since=2026-01-01"},
        )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/reports?since=2026-01-01"
    cookie = answer.headers["set-cookie"]
    flags = {part.strip().split("=")[0].lower() for part in cookie.split(";")}
    assert cookie.startswith("payrecon_session=")
    assert {"httponly", "secure", "path", "max-age", "samesite"} <= flags
    assert "Max-Age=28800" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie


def test_insecure_cookies_drops_only_the_secure_flag(cast: Cast) -> None:
    """PAYRECON_INSECURE_COOKIES=1 (the fixture) leaves HttpOnly and SameSite in place."""
    answer = httpx.post(f"{cast.url}/login", data={"token": cast.tokens["viewer"]})
    cookie = answer.headers["set-cookie"].lower()
    assert "secure" not in cookie and "httponly" in cookie and "samesite=strict" in cookie


@pytest.mark.parametrize(
    "target",
    ["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", ""],
)
def test_login_never_redirects_off_the_site(cast: Cast, target: str) -> None:
    """A `next` that is not a local path sends the operator to the console's home instead."""
    answer = httpx.post(f"{cast.url}/login", data={"token": cast.tokens["viewer"], "next": target})
    assert (answer.status_code, answer.headers["location"]) == (303, "/console")


def test_a_session_reads_and_needs_its_csrf_token_to_write(cast: Cast) -> None:
    """With a cookie, a GET works and a POST needs X-CSRF-Token (or the form field)."""
    body = {"reference": "CSRF-1", "amount": 5000}
    with _login(cast.url, cast.tokens["admin"]) as (client, csrf):
        read = client.get("/api/transfers")
        bare = client.post("/api/transfers/expected", json=body)
        wrong = client.post("/api/transfers/expected", json=body, headers={"x-csrf-token": "0"})
        right = client.post("/api/transfers/expected", json=body, headers={"x-csrf-token": csrf})
    assert read.status_code == 200
    assert (bare.status_code, bare.json()["error"]) == (403, "csrf_failed")
    assert (wrong.status_code, wrong.json()["error"]) == (403, "csrf_failed")
    assert right.status_code == 201, right.text


def test_the_reports_ack_form_needs_the_csrf_field_with_a_session(cast: Cast) -> None:
    """The report page's acknowledge form is refused without its csrf_token field."""
    with _login(cast.url, cast.tokens["finance"]) as (client, csrf):
        page = client.get("/reports")
        bare = client.post("/reports/findings/999/ack", data={"note": "checked"})
        right = client.post("/reports/findings/999/ack", data={"note": "ok", "csrf_token": csrf})
    assert page.status_code == 200
    assert bare.status_code == 403
    assert right.status_code == 404  # through the door; there is no finding 999


def test_a_bearer_token_needs_no_csrf_token_but_another_origin_is_refused(cast: Cast) -> None:
    """API clients with a token skip CSRF; a browser post from another site is still 403."""
    headers = {**bearer(cast.tokens["admin"]), **JSON}
    body = b'{"reference": "BEARER-1", "amount": 5000}'
    plain = httpx.post(f"{cast.url}/api/transfers/expected", content=body, headers=headers)
    foreign = httpx.post(
        f"{cast.url}/api/transfers/expected",
        content=body.replace(b"BEARER-1", b"BEARER-2"),
        headers={**headers, "origin": "https://evil.example"},
    )
    assert plain.status_code == 201 and foreign.status_code == 403


def test_logout_ends_the_session_at_once(cast: Cast, engine: Engine) -> None:
    """After logout the same cookie is refused, the cookie is cleared, and both are audited."""
    with _login(cast.url, cast.tokens["viewer"]) as (client, csrf):
        cookie = client.cookies["payrecon_session"]
        refused = client.post("/logout", json={})
        answer = client.post("/logout", json={}, headers={"x-csrf-token": csrf})
    after = httpx.get(f"{cast.url}/api/transfers", cookies={"payrecon_session": cookie})
    assert refused.status_code == 403
    assert answer.status_code == 200 and "payrecon_session=" in answer.headers["set-cookie"]
    assert after.status_code == 401
    actions = [(row.operator, row.action) for row in audit_rows(engine)]
    assert actions == [("vera", "login"), ("vera", "logout")]


def test_a_form_logout_goes_back_to_the_login_page(cast: Cast) -> None:
    """The console's logout form (csrf_token field) answers 303 to the sign-in page."""
    with _login(cast.url, cast.tokens["viewer"]) as (client, csrf):
        answer = client.post("/logout", data={"csrf_token": csrf})
        after = client.get("/api/transfers")
    assert (answer.status_code, answer.headers["location"]) == (303, "/console/login")
    assert after.status_code == 401


def test_revoking_an_operator_ends_its_sessions_at_once(cast: Cast, engine: Engine) -> None:
    """A revoked operator's live session and token stop working on the next request."""
    with _login(cast.url, cast.tokens["finance"]) as (client, _):
        before = client.get("/api/transfers")
        with write_session(engine) as session:
            ended = revoke_operator(session, name="fiona", now=utcnow())
        after = client.get("/api/transfers")
    token = httpx.get(f"{cast.url}/api/transfers", headers=bearer(cast.tokens["finance"]))
    assert (before.status_code, ended, after.status_code, token.status_code) == (200, 1, 401, 401)


def test_failed_logins_are_throttled_per_address_and_audited(
    start_cast: StartCast, engine: Engine
) -> None:
    """Past the limit an address gets 429 with Retry-After, even with a right token; each
    failure is one login_failed row that never holds the token tried."""
    with start_cast(login_max_failures=3, login_window=600) as cast:
        wrong = [
            httpx.post(f"{cast.url}/login", json={"token": f"guess-{n}-0123456789"})
            for n in range(3)
        ]
        blocked = httpx.post(f"{cast.url}/login", json={"token": cast.tokens["admin"]})
        form = httpx.post(f"{cast.url}/login", data={"token": cast.tokens["admin"]})
    assert [answer.status_code for answer in wrong] == [401, 401, 401]
    assert blocked.status_code == 429 and 1 <= int(blocked.headers["retry-after"]) <= 600
    assert form.status_code == 429 and "too many" in form.text
    failures = audit_rows(engine, AuditAction.LOGIN_FAILED)
    assert [(row.operator, row.remote_addr) for row in failures] == [("unknown", "127.0.0.1")] * 3
    assert not any("guess" in str(row.detail) + str(row.subject) for row in failures)


def test_the_login_page_is_a_plain_labelled_form_with_a_csp(cast: Cast) -> None:
    """GET /console/login: a form posting to /login, its field labelled, `next` escaped."""
    answer = httpx.get(f"{cast.url}/console/login", params={"next": '/reports"><script>x'})
    assert answer.status_code == 200
    assert "default-src 'none'" in answer.headers["content-security-policy"]
    text = answer.text
    assert '<form method="post" action="/login">' in text
    assert '<label for="token">' in text and 'id="token"' in text
    assert "<script>" not in text and "&#34;&gt;&lt;script&gt;" in text


def test_a_wrong_form_login_shows_the_page_again_with_an_error(cast: Cast) -> None:
    """A wrong token on the form: 401 with the sign-in form and a message, no cookie."""
    answer = httpx.post(f"{cast.url}/login", data={"token": "wrong-token-0123456789"})
    assert answer.status_code == 401 and "belongs to no operator" in answer.text
    assert "set-cookie" not in answer.headers


def test_an_admin_session_ends_when_the_admin_token_changes(start_cast: StartCast) -> None:
    """A session opened with PAYRECON_ADMIN_TOKEN survives a restart with the same token but
    not a restart with another one."""
    with start_cast() as cast, _login(cast.url, ADMIN) as (client, _):
        cookie = client.cookies["payrecon_session"]
    jar = {"payrecon_session": cookie}
    with start_cast() as cast:
        same = httpx.get(f"{cast.url}/api/transfers", cookies=jar)
    with start_cast(admin_token="another-admin-token-0123456789") as cast:
        changed = httpx.get(f"{cast.url}/api/transfers", cookies=jar)
        page = httpx.get(f"{cast.url}/console", cookies=jar)
    assert (same.status_code, changed.status_code) == (200, 401)
    assert page.status_code == 303 and page.headers["location"].startswith("/console/login")


def test_an_operator_session_needs_its_operator_s_token(cast: Cast, engine: Engine) -> None:
    """A session id issued for one operator's token is not accepted once it no longer matches
    that token's hash (as after the operator is revoked and added again)."""
    with _login(cast.url, cast.tokens["finance"]) as (client, _):
        before = client.get("/api/transfers")
        with write_session(engine) as session:
            session.execute(
                update(OperatorAccount)
                .where(col(OperatorAccount.name) == "fiona")
                .values(token_hash=secret_hash("a-new-token-for-fiona-0123456789"))
            )
        after = client.get("/api/transfers")
    assert (before.status_code, after.status_code) == (200, 401)


def test_operators_end_sessions_ends_them_at_once_and_is_audited(
    cast: Cast, database_url: str, engine: Engine
) -> None:
    """`operators end-sessions NAME` ends that operator's sessions, `--all` everyone's; tokens
    keep working; each run is one audit row; neither or both arguments exit 2."""
    env = {"PAYRECON_DATABASE_URL": database_url}
    viewer = _login(cast.url, cast.tokens["viewer"])
    with viewer as (vera, _), _login(cast.url, ADMIN) as (admin, _):
        one = CliRunner().invoke(cli, ["operators", "end-sessions", "vera"], env=env)
        vera_after, admin_between = vera.get("/api/transfers"), admin.get("/api/transfers")
        everyone = CliRunner().invoke(cli, ["operators", "end-sessions", "--all"], env=env)
        admin_after = admin.get("/api/transfers")
    token = httpx.get(f"{cast.url}/api/transfers", headers=bearer(cast.tokens["viewer"]))
    neither = CliRunner().invoke(cli, ["operators", "end-sessions"], env=env)
    both = CliRunner().invoke(cli, ["operators", "end-sessions", "vera", "--all"], env=env)
    assert (one.exit_code, one.output) == (0, "1 session(s) of vera ended\n")
    assert (everyone.exit_code, everyone.output) == (0, "1 session(s) of every operator ended\n")
    assert (vera_after.status_code, admin_between.status_code) == (401, 200)
    assert (admin_after.status_code, token.status_code) == (401, 200)
    assert (neither.exit_code, both.exit_code) == (2, 2)
    rows = audit_rows(engine, AuditAction.SESSIONS_END)
    assert [(row.subject, row.detail) for row in rows] == [
        ("operator:vera", "1 session(s) ended"),
        ("operator:*", "1 session(s) ended"),
    ]
