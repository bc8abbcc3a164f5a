"""Hostile clients of the operators' routes: forged X-Forwarded-For lines, stalled bodies,
token guessing, a typed /login and a Host header chosen by the client."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy import Engine

from ledger.audit import AuditAction
from tests.integration.admin.conftest import ADMIN, Cast, StartCast, audit_rows, bearer

FORM = "application/x-www-form-urlencoded"


def _half_a_body(url: str, path: str, headers: dict[str, str], sent: bytes, length: int) -> bytes:
    """POST `path` declaring `length` bytes but sending only `sent`: the server's answer."""
    parts = urlsplit(url)
    lines = [f"POST {path} HTTP/1.1", f"Host: {parts.netloc}", f"Content-Length: {length}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + sent)
        answer = b""
        while chunk := sock.recv(65536):  # the server closes after its 408
            answer += chunk
    return answer


def test_login_throttle_and_audit_read_every_forwarded_for_line(
    start_cast: StartCast, engine: Engine
) -> None:
    """Behind a trusted proxy that appends its own X-Forwarded-For line, a client forging a
    new first line each time is still one address: throttled after two failures, and the audit
    rows name the address the proxy saw."""
    with start_cast(trusted_proxies="127.0.0.1", login_max_failures=2, login_window=600) as cast:
        answers = [
            httpx.post(
                f"{cast.url}/login",
                json={"token": "guess-0123456789"},
                headers=[("x-forwarded-for", f"10.9.9.{n}"), ("x-forwarded-for", "198.51.100.7")],
            )
            for n in range(3)
        ]
        other = httpx.post(f"{cast.url}/login", json={"token": "guess-0123456789"})
    assert [answer.status_code for answer in answers] == [401, 401, 429]
    assert other.status_code == 401  # the proxy's own address is another key
    rows = audit_rows(engine, AuditAction.LOGIN_FAILED)
    assert [row.remote_addr for row in rows] == ["198.51.100.7", "198.51.100.7", "127.0.0.1"]


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/login", {"content-type": FORM}),
        ("/logout", {"content-type": FORM, "cookie": "payrecon_session=x"}),
        ("/api/transfers/expected", {"content-type": "application/json", **bearer(ADMIN)}),
        ("/console/findings/ack", {"content-type": FORM, **bearer(ADMIN)}),
        ("/reports/findings/1/ack", {"content-type": FORM, **bearer(ADMIN)}),
        ("/api/statements?mapping=sandbox", {"content-type": "text/csv", **bearer(ADMIN)}),
        (
            "/api/statements?mapping=sandbox",
            {"content-type": "multipart/form-data; boundary=xyz", **bearer(ADMIN)},
        ),
    ],
)
def test_a_stalled_body_gets_408_on_every_route_that_reads_one(
    start_cast: StartCast, path: str, headers: dict[str, str]
) -> None:
    """Headers and half a body, then nothing: 408 once PAYRECON_BODY_TIMEOUT has passed, and
    the connection closed with it (not held to the keep-alive timeout)."""
    with start_cast(body_timeout=0.5) as cast:
        answer = _half_a_body(cast.url, path, headers, b"token=abc&", 400)
        after = httpx.get(f"{cast.url}/api/transfers", headers=bearer(ADMIN))
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:300]
    assert b"\r\nconnection: close\r\n" in answer.lower(), answer[:300]
    assert after.status_code == 200


def test_failed_bearer_and_basic_guesses_are_throttled_and_audited(
    start_cast: StartCast, engine: Engine
) -> None:
    """Wrong tokens on /api, /reports and /console count in the login throttle (429 after
    it, even for the right token) and each is an auth.failed row without the token."""
    with start_cast(login_max_failures=3, login_window=600) as cast:
        wrong = [
            httpx.get(f"{cast.url}/api/transfers", headers=bearer("guess-api-0123456789")),
            httpx.get(f"{cast.url}/reports", auth=("x", "guess-basic-0123456789")),
            httpx.get(f"{cast.url}/console", headers=bearer("guess-page-0123456789")),
        ]
        blocked = httpx.get(f"{cast.url}/api/transfers", headers=bearer(ADMIN))
        login = httpx.post(f"{cast.url}/login", json={"token": ADMIN})
    assert [answer.status_code for answer in wrong] == [401, 401, 303]
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1
    assert login.status_code == 429
    rows = audit_rows(engine, AuditAction.AUTH_FAILED)
    assert [(row.operator, row.remote_addr) for row in rows] == [("unknown", "127.0.0.1")] * 3
    kept = " ".join(f"{row.subject} {row.detail} {row.role}" for row in rows)
    assert "guess" not in kept


def test_get_login_redirects_to_the_sign_in_page(cast: Cast) -> None:
    """A person who types /login lands on the sign-in form (a relative 303)."""
    answer = httpx.get(f"{cast.url}/login")
    page = httpx.get(f"{cast.url}/login", follow_redirects=True)
    assert (answer.status_code, answer.headers["location"]) == (303, "/console/login")
    assert page.status_code == 200 and "<form" in page.text


def test_the_webhook_slash_redirect_is_relative_whatever_the_host(cast: Cast) -> None:
    """`POST /webhook/` is sent to `/webhook` with a relative Location, never to the Host."""
    answer = httpx.post(f"{cast.url}/webhook/", content=b"{}", headers={"host": "evil.example"})
    assert (answer.status_code, answer.headers["location"]) == (307, "/webhook")
