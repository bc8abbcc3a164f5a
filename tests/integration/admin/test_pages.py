"""`page(role)` guards console pages: sign-in redirect, 403 page, CSRF on every form post."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from admin.identity import Role, csrf_token, current_operator, page, requires
from admin.login import login
from admin.throttle import LoginThrottle
from ledger.db import create_db_engine
from payrecon.settings import load_settings
from tests.integration.admin.conftest import ADMIN, bearer, seed_operators
from tests.support.servers import running_server
from web.forms import read_form


async def _show(request: Request) -> Response:
    operator = current_operator(request)
    return PlainTextResponse(f"{operator.name} {operator.role} {csrf_token(request)}")


async def _post(request: Request) -> Response:
    # The handler still reads the whole form after the guard has checked its csrf_token.
    form = await read_form(request)
    return PlainTextResponse(f"{current_operator(request).name} posted {form['note']}")


@pytest.fixture
def page_app(database_url: str, engine: Engine) -> Iterator[tuple[str, dict[str, str]]]:
    """A tiny app with one finance page (GET and POST) and /login; yields URL and tokens."""
    tokens, _ = seed_operators(engine)
    app = Starlette(
        routes=[
            Route("/console/work", page(Role.FINANCE)(_show), methods=["GET"]),
            Route("/console/work", page(Role.FINANCE)(_post), methods=["POST"]),
            Route("/login", login, methods=["POST"]),
        ]
    )
    app.state.engine = engine
    app.state.admin_token = ADMIN
    app.state.settings = load_settings(database_url=database_url, insecure_cookies=True)
    app.state.login_throttle = LoginThrottle(max_failures=10, window=300, clock=lambda: 0.0)
    with running_server(app) as url:
        yield url, tokens


def test_a_page_without_identity_redirects_to_sign_in_and_back(
    page_app: tuple[str, dict[str, str]],
) -> None:
    """No token or session: 303 to /console/login with `next` the page asked for."""
    url, _ = page_app
    answer = httpx.get(f"{url}/console/work?kind=fee_mismatch")
    assert answer.status_code == 303
    assert (
        answer.headers["location"] == "/console/login?next=%2Fconsole%2Fwork%3Fkind%3Dfee_mismatch"
    )


def test_a_page_below_its_role_is_a_403_page(page_app: tuple[str, dict[str, str]]) -> None:
    """A viewer on a finance page gets an HTML 403 with a CSP; finance sees the page."""
    url, tokens = page_app
    viewer = httpx.get(f"{url}/console/work", headers=bearer(tokens["viewer"]))
    finance = httpx.get(f"{url}/console/work", headers=bearer(tokens["finance"]))
    assert viewer.status_code == 403 and "text/html" in viewer.headers["content-type"]
    assert "default-src 'none'" in viewer.headers["content-security-policy"]
    assert finance.status_code == 200 and finance.text.startswith("fiona finance ")


def test_every_form_post_needs_its_csrf_token(page_app: tuple[str, dict[str, str]]) -> None:
    """A page's POST without csrf_token, or with another session's, is a 403 page; with its
    own it reaches the handler, which still reads the whole form."""
    url, tokens = page_app
    with httpx.Client(base_url=url) as one, httpx.Client(base_url=url) as other:
        assert one.post("/login", data={"token": tokens["finance"]}).status_code == 303
        assert other.post("/login", data={"token": tokens["admin"]}).status_code == 303
        mine = one.get("/console/work").text.split()[-1]
        theirs = other.get("/console/work").text.split()[-1]
        bare = one.post("/console/work", data={"note": "hi"})
        foreign = one.post("/console/work", data={"note": "hi", "csrf_token": theirs})
        good = one.post("/console/work", data={"note": "hello there", "csrf_token": mine})
        basic = httpx.post(
            f"{url}/console/work", data={"note": "hi"}, headers=bearer(tokens["finance"])
        )
    assert mine != theirs
    assert (bare.status_code, foreign.status_code, basic.status_code) == (403, 403, 403)
    assert (good.status_code, good.text) == (200, "fiona posted hello there")


def test_a_silent_database_is_503_not_500_when_an_identity_needs_it(tmp_path: Path) -> None:
    """An operator token or session cannot be checked without the ledger: 503 (JSON for the
    API, a page for the console); the admin token needs no database."""
    broken = create_db_engine(f"sqlite:///{tmp_path}/missing/dir/ledger.db")
    app = Starlette(
        routes=[
            Route("/api/x", requires(Role.VIEWER)(_show), methods=["GET"]),
            Route("/console/work", page(Role.VIEWER)(_show), methods=["GET"]),
        ]
    )
    app.state.engine = broken
    app.state.admin_token = ADMIN
    try:
        with running_server(app) as url:
            api = httpx.get(f"{url}/api/x", headers=bearer("some-operator-token-0123"))
            console = httpx.get(f"{url}/console/work", cookies={"payrecon_session": "abc"})
            admin = httpx.get(f"{url}/api/x", headers=bearer(ADMIN))
    finally:
        broken.dispose()
    assert (api.status_code, api.json()["error"]) == (503, "database_unavailable")
    assert console.status_code == 503 and "text/html" in console.headers["content-type"]
    assert admin.status_code == 200 and admin.text.startswith("admin admin ")
