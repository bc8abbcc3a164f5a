"""Hypothesis over raw HTTP against the webhook route and the admin API: never a 5xx."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.apps import ADMIN

# Strings a hostile sender would try: NUL (PostgreSQL's text refuses it), lone surrogates (no
# encoding stores them), line breaks, bidi and BOM marks, SQL and format syntax, astral planes.
HOSTILE = [
    "\x00",
    "\ud800",
    "a\udfffb",
    "ref\r\nX-Injected: 1",
    "\u202egnp.exe",
    "\ufeffREF",
    "'; DROP TABLE transfer; --",
    "%s%n{0}",
    "\U0001d11e" * 40,
]
# Any code point, surrogates included (hypothesis leaves those out unless told).
any_text = st.text(st.characters(exclude_categories=()), max_size=120) | st.sampled_from(HOSTILE)
json_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | any_text
    | st.floats(allow_nan=False, allow_infinity=False)
)
json_value = st.recursive(
    json_leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=12,
)
event_like = st.fixed_dictionaries(
    {
        "event": st.sampled_from(["transfer.success", "transfer.failed", "other"]) | any_text,
        "data": st.fixed_dictionaries(
            {},
            optional={
                "reference": any_text | json_value,
                "merchant_reference": any_text | json_value,
                "amount": st.integers(min_value=-(2**70), max_value=2**70) | json_value,
                "fee": st.integers(min_value=-5, max_value=2**64) | json_value,
                "status": st.sampled_from(["successful", "failed", "pending", ""]) | json_value,
                "failure_reason": any_text | json_value,
            },
        ),
    }
)


@pytest.fixture
def client(receiver_url: str) -> Iterator[httpx.Client]:
    """One HTTP client for the fuzz run."""
    with httpx.Client(base_url=receiver_url, timeout=30) as session:
        yield session


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.binary(max_size=300)
    | event_like.map(lambda e: json.dumps(e).encode())
    # Raw UTF-8 too; a lone surrogate then becomes bytes no UTF-8 decoder accepts.
    | event_like.map(lambda e: json.dumps(e, ensure_ascii=False).encode("utf-8", "surrogatepass")),
    content_type=st.sampled_from(
        [
            "application/json",
            "application/json; charset=utf-8",
            "text/plain",
            "",
            "application/cloudevents+json",
        ]
    ),
)
# Found by hand once, and missed by this test until it drew surrogates: always tried.
@example(
    body=b'{"event": "other", "data": {"reference": "\\ud800"}}', content_type="application/json"
)
@example(
    body=b'{"event": "other", "data": {"reference": "a\\u0000"}}', content_type="application/json"
)
def test_no_body_or_media_type_yields_a_server_error(
    client: httpx.Client, body: bytes, content_type: str
) -> None:
    """Hostile bodies get 200 or a 4xx with a JSON error, never a 5xx."""
    response = client.post("/webhook", content=body, headers={"content-type": content_type})
    assert response.status_code < 500, response.text
    assert response.json()["status"] in {"ok", "error"}


registration_like = st.fixed_dictionaries(
    {},
    optional={
        "reference": any_text | json_value,
        "provider_reference": any_text | json_value,
        "amount": st.integers(min_value=-5, max_value=2**70) | any_text | json_value,
        "fee": st.integers(min_value=-5, max_value=2**64) | any_text | json_value,
    },
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.binary(max_size=200)
    | registration_like.map(lambda r: json.dumps(r).encode())
    | json_value.map(lambda v: json.dumps(v).encode())
)
@example(body=b'{"reference": "\\ud800", "amount": 1}')
def test_no_registration_yields_a_server_error(client: httpx.Client, body: bytes) -> None:
    """Hostile registrations get 201, 200, 409 or a 4xx with a JSON error, never a 5xx."""
    response = client.post(
        "/api/transfers/expected",
        content=body,
        headers={"content-type": "application/json", "authorization": f"Bearer {ADMIN}"},
    )
    assert response.status_code < 500, response.text
    assert isinstance(response.json(), dict)


def _cursor_of(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8", "surrogatepass")).decode().rstrip("=")


# ISO instants anywhere in years 1-9999 with any offset up to ±23:59 (the edges overflow UTC).
instant = st.builds(
    lambda moment, offset: moment.replace(tzinfo=dt.timezone(offset)).isoformat(),
    st.datetimes(),
    st.timedeltas(
        min_value=-dt.timedelta(hours=23, minutes=59), max_value=dt.timedelta(hours=23, minutes=59)
    ),
)
query_value = (
    instant
    | st.dates().map(dt.date.isoformat)
    | st.integers(min_value=-(2**70), max_value=2**70).map(str)
    | st.integers(min_value=-5, max_value=2**80).map(lambda n: _cursor_of(f"t:{n}"))
    | any_text.map(_cursor_of)
    | any_text
)
admin_query = st.dictionaries(
    st.sampled_from(["since", "until", "cursor", "limit", "status", "finding"]),
    query_value,
    max_size=4,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(["/api/transfers", "/api/reports/summary", "/reports"]),
    query=admin_query,
)
# The fuzzed 500s of issue 13, always tried.
@example(path="/api/transfers", query={"cursor": _cursor_of(f"t:{2**63}")})
@example(path="/api/transfers", query={"since": "0001-01-01T00:00:00+14:00"})
@example(path="/api/reports/summary", query={"until": "9999-12-31"})
@example(path="/reports", query={"since": "0001-01-01"})
def test_no_admin_query_yields_a_server_error(
    client: httpx.Client, path: str, query: dict[str, str]
) -> None:
    """Hostile query strings on the admin reads get 200 or a 400 with a JSON error, never a
    5xx."""
    # Unpaired surrogates cannot travel in a URL; httpx would refuse to encode them.
    params = {k: v.encode("utf-8", "replace").decode() for k, v in query.items()}
    response = client.get(path, params=params, headers={"authorization": f"Bearer {ADMIN}"})
    assert response.status_code in {200, 400}, response.text
    if response.status_code == 400:
        assert response.json()["status"] == "error"
