"""Hypothesis over raw HTTP against the relay's admin routes: never a 5xx."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ledger.events.types import RelayEventType
from tests.integration.relay.conftest import AUTH

HOSTILE = ["\x00", "\ud800", "a\r\nb", "http://[::1", "http://a:99999/", "\U0001d11e" * 30]
any_text = st.text(st.characters(exclude_categories=()), max_size=80) | st.sampled_from(HOSTILE)
json_leaf = st.none() | st.booleans() | st.integers() | any_text | st.floats(allow_nan=False)
json_value = st.recursive(
    json_leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=8,
)
types = st.lists(st.sampled_from(sorted(RelayEventType)) | any_text, max_size=4)
endpoint_like = st.fixed_dictionaries(
    {},
    optional={
        "url": st.sampled_from(["http://10.0.0.7/h", "https://[::1]:8443/x"]) | any_text,
        "events": types | json_value,
        "description": any_text | json_value,
        "enabled": st.booleans() | json_value,
        "secret": any_text,
    },
)
bodies = (
    st.binary(max_size=200)
    | endpoint_like.map(lambda e: json.dumps(e).encode())
    | endpoint_like.map(
        lambda e: json.dumps(e, ensure_ascii=False).encode("utf-8", "surrogatepass")
    )
)
FUZZ = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture
def client(relay_url: str) -> Iterator[httpx.Client]:
    """One HTTP client with the admin token, and one endpoint (id 1) to patch."""
    with httpx.Client(base_url=relay_url, timeout=30, headers=AUTH) as session:
        assert session.post("/api/endpoints", json={"url": "http://10.0.0.7/h"}).status_code == 201
        yield session


JSON = {"content-type": "application/json"}


@FUZZ
@given(body=bodies)
@example(body=b'{"url": "http://10.0.0.7/\\ud800"}')
@example(body=b'{"url": "http://10.0.0.7/", "description": "\\u0000"}')
def test_no_endpoint_body_yields_a_server_error(client: httpx.Client, body: bytes) -> None:
    """Hostile POST and PATCH bodies get 2xx or a 4xx JSON error, never a 5xx."""
    for answer in (
        client.post("/api/endpoints", content=body, headers=JSON),
        client.patch("/api/endpoints/1", content=body, headers=JSON),
    ):
        assert answer.status_code < 500, answer.text
        assert isinstance(answer.json(), dict)


def _printable(text: str) -> str:
    # A lone surrogate cannot be sent at all; its UTF-8 replacement can.
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _cursor_of(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8", "surrogatepass")).decode().rstrip("=")


@FUZZ
@given(
    query=st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(sorted(RelayEventType)) | any_text,
            "subject": st.sampled_from(["transfer", "collection:C-1"]) | any_text,
            "since": any_text | st.dates().map(str),
            "limit": any_text | st.integers(-5, 2**70).map(str),
            "cursor": any_text | any_text.map(lambda t: _cursor_of("e:" + t)),
        },
    ),
    path=any_text,
)
def test_no_event_query_or_id_yields_a_server_error(
    client: httpx.Client, query: dict[str, str], path: str
) -> None:
    """Any query string on the event list, and any id in an event or delivery path, gets 200
    or a 4xx JSON error."""
    clean = {k: _printable(v) for k, v in query.items()}
    # Percent-encoded, as a client must send it: a NUL or a slash reaches the route as text.
    segment = quote(_printable(path), safe="") or "x"
    for answer in (
        client.get("/api/events", params=clean),
        client.get(f"/api/events/{segment}"),
        client.post(f"/api/deliveries/{segment}/retry"),
        client.get(f"/api/endpoints/{segment}"),
    ):
        assert answer.status_code < 500, answer.text
        assert isinstance(answer.json(), dict)


def test_an_encoded_slash_in_an_id_is_a_json_404_not_a_redirect(client: httpx.Client) -> None:
    """`/api/events/%2F` (a path that matches no route once decoded) is a 404 JSON error, not
    Starlette's slash redirect with an empty body."""
    for path in ("/api/events/%2F", "/api/endpoints/%2F", "/api/events/", "/api/endpoints//"):
        answer = client.get(path)
        assert answer.status_code == 404, (path, answer.status_code)
        assert answer.json()["error"] == "not_found"
