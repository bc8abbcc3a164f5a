"""Every route of the app, with every identity: the role table is the only way in."""

from __future__ import annotations

import re

import httpx
import pytest
from sqlalchemy import Engine
from starlette.routing import Route

from admin.identity import Role, csrf_for
from payrecon.app import create_app
from payrecon.settings import load_settings
from tests.integration.admin.conftest import ADMIN, Cast, bearer

PUBLIC = "public"
API, PAGE = "api", "page"
V, F, A = Role.VIEWER, Role.FINANCE, Role.ADMIN

# (method, path) -> PUBLIC, or (API|PAGE, the least role that may). A route the app serves that
# is missing here fails the test, so a new route cannot be added without its rule.
EXPECTED: dict[tuple[str, str], str | tuple[str, Role]] = {
    ("POST", "/webhook"): PUBLIC,
    ("POST", "/webhook/{token}"): PUBLIC,
    ("POST", "/webhook/"): PUBLIC,  # 307 to /webhook (test_webhook_http.py)
    ("GET", "/healthz"): PUBLIC,
    ("GET", "/readyz"): PUBLIC,
    ("GET", "/metrics"): PUBLIC,
    ("POST", "/login"): PUBLIC,  # checks the token it is given (test_sessions.py)
    ("POST", "/logout"): PUBLIC,  # ends the cookie's session (test_sessions.py)
    ("GET", "/console/login"): PUBLIC,
    ("GET", "/login"): PUBLIC,  # a 303 to the sign-in page (test_hostile_clients.py)
    ("GET", "/api/audit"): (API, A),
    ("GET", "/api/transfers"): (API, V),
    ("POST", "/api/transfers"): (API, A),
    ("POST", "/api/transfers/expected"): (API, A),
    ("GET", "/api/transfers/{reference}"): (API, V),
    ("GET", "/api/collections"): (API, V),
    ("POST", "/api/collections"): (API, A),
    ("POST", "/api/collections/expected"): (API, A),
    ("GET", "/api/collections/{reference}"): (API, V),
    ("GET", "/api/endpoints"): (API, V),
    ("POST", "/api/endpoints"): (API, A),
    ("GET", "/api/endpoints/{id}"): (API, V),
    ("PATCH", "/api/endpoints/{id}"): (API, A),
    ("DELETE", "/api/endpoints/{id}"): (API, A),
    ("POST", "/api/endpoints/{id}/rotate-secret"): (API, A),
    ("GET", "/api/events"): (API, V),
    ("GET", "/api/events/{id}"): (API, V),
    ("POST", "/api/deliveries/{id}/retry"): (API, A),
    ("GET", "/api/reports/summary"): (API, V),
    ("GET", "/reports"): (API, V),
    ("POST", "/reports/findings/{id:int}/ack"): (API, F),
    ("GET", "/api/transfers/{reference}/checks"): (API, V),
    ("GET", "/api/findings"): (API, V),
    ("POST", "/api/findings/ack"): (API, F),
    ("POST", "/api/findings/{id}/ack"): (API, F),
    ("POST", "/api/findings/{id}/assign"): (API, F),
    ("POST", "/api/findings/assign"): (API, F),
    ("POST", "/api/findings/{id}/notes"): (API, F),
    ("GET", "/api/statements"): (API, V),
    ("POST", "/api/statements"): (API, F),
    ("GET", "/api/statements/lines"): (API, V),
    ("POST", "/api/statements/lines/{id}/match"): (API, F),
    ("POST", "/api/statements/lines/{id}/unmatch"): (API, F),
    ("POST", "/api/statements/lines/{id}/ignore"): (API, F),
    ("GET", "/api/periods/tie-out"): (API, V),
    ("POST", "/api/periods/close"): (API, F),
    ("GET", "/console"): (PAGE, V),
    ("GET", "/console/transfers"): (PAGE, V),
    ("GET", "/console/collections"): (PAGE, V),
    ("GET", "/console/collections/{reference:path}"): (PAGE, V),
    ("GET", "/console/transfers/{reference:path}"): (PAGE, V),
    ("GET", "/console/findings"): (PAGE, V),
    ("GET", "/console/reports"): (PAGE, V),
    ("GET", "/console/reports/download"): (PAGE, F),
    ("POST", "/console/findings/ack"): (PAGE, F),
    ("POST", "/console/findings/bulk"): (PAGE, F),
    ("POST", "/console/findings/{id}/assign"): (PAGE, F),
    ("POST", "/console/findings/{id}/notes"): (PAGE, F),
    ("GET", "/console/endpoints"): (PAGE, V),
    ("POST", "/console/endpoints/{id}/replay"): (PAGE, A),
    ("POST", "/console/deliveries/{id}/retry"): (PAGE, A),
    ("GET", "/console/audit"): (PAGE, A),
    ("GET", "/console/statements"): (PAGE, V),
    ("GET", "/console/periods"): (PAGE, V),
    ("GET", "/console/periods/download"): (PAGE, V),
    ("POST", "/console/statements/import"): (PAGE, F),
    ("POST", "/console/statements/lines/{id}/confirm"): (PAGE, F),
    ("POST", "/console/statements/lines/{id}/match"): (PAGE, F),
    ("POST", "/console/statements/lines/{id}/ignore"): (PAGE, F),
    ("POST", "/console/statements/lines/{id}/unmatch"): (PAGE, F),
    ("POST", "/console/periods/close"): (PAGE, F),
}
SAMPLE = {
    "reference": "REF-1",
    "reference:path": "REF-1",
    "id": "1",
    "id:int": "1",
    "token": "x" * 20,
}
ROLES = ("viewer", "finance", "admin")


def _served(engine: Engine) -> set[tuple[str, str]]:
    app = create_app(load_settings(database_url="sqlite://", admin_token=ADMIN), engine=engine)
    served = set()
    for route in app.routes:
        assert isinstance(route, Route), f"{route!r}: not a plain Route, so not checked here"
        for method in route.methods or ():
            if method != "HEAD":
                served.add((method, route.path))
    return served


def _url(base: str, path: str) -> str:
    return base + re.sub(r"\{([^}]+)\}", lambda m: SAMPLE[m.group(1)], path)


def _send(
    cast: Cast,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    cookies: dict[str, str] | None = None,
) -> httpx.Response:
    # An empty JSON object as the body: enough to pass the door, whatever the handler thinks.
    with httpx.Client(cookies=cookies, follow_redirects=False, timeout=30) as client:
        return client.request(
            method,
            _url(cast.url, path),
            content=None if method == "GET" else b"{}",
            headers={"content-type": "application/json", **(headers or {})},
        )


def test_every_served_route_is_in_the_role_table(engine: Engine) -> None:
    """The app serves exactly the routes of the table: none without a rule, none stale."""
    served = _served(engine)
    assert served - set(EXPECTED) == set(), "routes without a rule in EXPECTED"
    assert set(EXPECTED) - served == set(), "rules for routes the app does not serve"


@pytest.mark.parametrize(
    ("method", "path"), [key for key, rule in EXPECTED.items() if rule != PUBLIC]
)
def test_each_route_answers_each_identity_as_its_role_says(
    cast: Cast, method: str, path: str
) -> None:
    """No, a wrong, a revoked token or an expired session: 401 (a page: 303 to sign in); a
    role below the rule: 403; the rule's role and above (and the admin token): neither."""
    rule = EXPECTED[(method, path)]
    assert isinstance(rule, tuple)
    kind, needed = rule
    refused_anonymous = 303 if kind == PAGE else 401
    anonymous = {
        "none": _send(cast, method, path),
        "wrong": _send(cast, method, path, headers=bearer("not-a-token-0123456789")),
        "revoked": _send(cast, method, path, headers=bearer(cast.tokens["revoked"])),
        "expired": _send(cast, method, path, cookies={"payrecon_session": cast.expired_session}),
    }
    assert {name: answer.status_code for name, answer in anonymous.items()} == dict.fromkeys(
        anonymous, refused_anonymous
    )
    for role in (*ROLES, "admin token"):
        token = ADMIN if role == "admin token" else cast.tokens[role]
        headers = bearer(token)
        if kind == PAGE:
            # A console form also needs its CSRF token (test_pages.py refuses it without).
            headers["x-csrf-token"] = csrf_for(token)
        answer = _send(cast, method, path, headers=headers)
        allowed = role == "admin token" or Role(role).allows(needed)
        if allowed:
            assert answer.status_code not in (401, 403, 500), (role, answer.text)
        else:
            assert answer.status_code == 403, (role, answer.text)
            if kind == API:
                assert answer.json()["error"] == "forbidden"


def test_basic_auth_carries_an_operators_token_as_the_password(cast: Cast) -> None:
    """A browser's Basic prompt works with an operator's token as the password."""
    answer = httpx.get(f"{cast.url}/api/transfers", auth=("anything", cast.tokens["viewer"]))
    refused = httpx.get(f"{cast.url}/api/audit", auth=("anything", cast.tokens["viewer"]))
    assert (answer.status_code, refused.status_code) == (200, 403)
