"""Bad input is a 4xx on every operators' route, on both databases: ids past 2^63 − 1, NUL
bytes in paths, query strings and bodies, deeply nested JSON. Never a 500, never a false 503
"database unavailable" (PRODUCT.md Robustness rules)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from starlette.routing import Route

from admin.identity import csrf_for
from admin.routes import admin_routes
from tests.integration.admin.conftest import ADMIN, Cast, bearer

HUGE = "99999999999999999999"
NUL = "a\x00b"
NESTED = b"[" * 5_000 + b"]" * 5_000
NESTED_OBJECT = b'{"a":' * 2_000 + b"1" + b"}" * 2_000
# Every query parameter an operators' route reads.
QUERY_PARAMETERS = (
    "subject", "operator", "action", "assignee", "state", "kind", "status", "finding", "since",
    "until", "cursor", "limit", "type", "q", "from", "to", "period", "endpoint", "next",
)  # fmt: skip
BODY_FIELDS = (
    "reference", "assignee", "note", "url", "name", "bank_code", "account_number", "token",
    "description", "kind", "events", "secret", "csrf_token",
)  # fmt: skip
PARAMETER = re.compile(r"\{(\w+)(?::\w+)?\}")


def _routes() -> Iterator[tuple[str, str]]:
    for route in admin_routes():
        assert isinstance(route, Route)
        for method in sorted(route.methods or ()):
            if method != "HEAD":
                yield method, route.path


ROUTES = sorted(set(_routes()))
WITH_IDS = [(method, path) for method, path in ROUTES if "{" in path]
WITH_BODIES = [(method, path) for method, path in ROUTES if method in ("POST", "PATCH")]
AS_ADMIN = {**bearer(ADMIN), "x-csrf-token": csrf_for(ADMIN)}


def _at(path: str, value: str) -> str:
    return PARAMETER.sub(quote(value, safe=""), path)


def _send(cast: Cast, method: str, path: str, **options: object) -> httpx.Response:
    headers = {**AS_ADMIN, **options.pop("headers", {})}  # type: ignore[dict-item]
    return httpx.request(method, f"{cast.url}{path}", headers=headers, timeout=30, **options)  # type: ignore[arg-type]


def _not_a_fault(answer: httpx.Response) -> bool:
    # Below 500; the one 503 allowed is payouts' "provider not configured" (no provider here).
    if answer.status_code == 503:
        return "provider_not_configured" in answer.text
    return answer.status_code < 500


@pytest.mark.parametrize(("method", "path"), WITH_IDS)
@pytest.mark.parametrize("value", [HUGE, NUL, "-1", "0x10"])
def test_an_id_no_row_can_have_is_a_4xx(cast: Cast, method: str, path: str, value: str) -> None:
    """A path id beyond 2^63 − 1, with a NUL, negative or not decimal: 4xx (or a console
    redirect with an error), on every route with a path parameter."""
    body = {"json": {"note": "x", "assignee": None}} if method in ("POST", "PATCH") else {}
    answer = _send(cast, method, _at(path, value), **body)
    assert _not_a_fault(answer), (method, path, value, answer.status_code, answer.text[:200])


@pytest.mark.parametrize(
    "path", [path for method, path in ROUTES if method == "GET" and "{" not in path]
)
def test_nul_in_any_query_parameter_is_never_a_5xx(cast: Cast, path: str) -> None:
    """Every query parameter any route reads, given a NUL or a huge number: below 500."""
    for name in QUERY_PARAMETERS:
        for value in (NUL, HUGE):
            answer = _send(cast, "GET", path, params={name: value})
            assert _not_a_fault(answer), (path, name, value, answer.text[:200])


@pytest.mark.parametrize(("method", "path"), WITH_BODIES)
def test_hostile_bodies_are_4xx_on_every_route_that_reads_one(
    cast: Cast, method: str, path: str
) -> None:
    """Deeply nested JSON (arrays and objects), and a JSON object or a form whose every field
    holds a NUL: 4xx (or a console redirect with an error), never a 500 or 503."""
    target = _at(path, "1")
    for content in (NESTED, NESTED_OBJECT):
        answer = _send(
            cast, method, target, content=content, headers={"content-type": "application/json"}
        )
        assert _not_a_fault(answer), (path, answer.status_code, answer.text[:200])
    fields = dict.fromkeys(BODY_FIELDS, NUL)
    as_json = _send(cast, method, target, json={**fields, "ids": [1], "amount": 100})
    as_form = _send(cast, method, target, data={**fields, "ids": "1"})
    assert _not_a_fault(as_json), (path, as_json.status_code, as_json.text[:200])
    assert _not_a_fault(as_form), (path, as_form.status_code, as_form.text[:200])


def test_nested_json_on_login_and_the_reports_ack_is_400(cast: Cast) -> None:
    """The two routes found answering 500 to nested JSON now answer 400 malformed_json."""
    json_type = {"content-type": "application/json"}
    login = httpx.post(f"{cast.url}/login", content=NESTED, headers=json_type)
    ack = _send(cast, "POST", "/reports/findings/1/ack", content=NESTED, headers=json_type)
    assert (login.status_code, login.json()["error"]) == (400, "malformed_json")
    assert (ack.status_code, ack.json()["error"]) == (400, "malformed_json")


def test_ids_and_nul_found_by_the_review_are_4xx(cast: Cast) -> None:
    """The review's cases: a 20-digit reports ack id is 404, a NUL subject or assignee is
    a 4xx, not a 503 'database unavailable'."""
    ack = _send(cast, "POST", f"/reports/findings/{HUGE}/ack", data={"note": "x"})
    subject = _send(cast, "GET", "/api/events", params={"subject": NUL})
    assignee = _send(cast, "GET", "/api/findings", params={"assignee": NUL})
    assign = _send(cast, "POST", "/api/findings/1/assign", json={"assignee": NUL})
    assert ack.status_code == 404
    assert [a.status_code // 100 for a in (subject, assignee, assign)] == [4, 4, 4]
