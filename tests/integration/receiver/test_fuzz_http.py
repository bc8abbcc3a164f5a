"""Hypothesis over raw HTTP against the webhook route: never a 5xx."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=30)
    | st.floats(allow_nan=False, allow_infinity=False)
)
json_value = st.recursive(
    json_leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=12,
)
event_like = st.fixed_dictionaries(
    {
        "event": st.sampled_from(["transfer.success", "transfer.failed", "other"])
        | st.text(max_size=80),
        "data": st.fixed_dictionaries(
            {},
            optional={
                "reference": st.text(max_size=120) | json_value,
                "merchant_reference": st.text(max_size=120) | json_value,
                "amount": st.integers(min_value=-(2**70), max_value=2**70) | json_value,
                "fee": st.integers(min_value=-5, max_value=2**64) | json_value,
                "status": st.sampled_from(["successful", "failed", "pending", ""]) | json_value,
                "failure_reason": st.text(max_size=50) | json_value,
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
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.binary(max_size=300) | event_like.map(lambda e: json.dumps(e).encode()),
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
def test_no_body_or_media_type_yields_a_server_error(
    client: httpx.Client, body: bytes, content_type: str
) -> None:
    """Hostile bodies get 200 or a 4xx with a JSON error, never a 5xx."""
    response = client.post("/webhook", content=body, headers={"content-type": content_type})
    assert response.status_code < 500, response.text
    assert response.json()["status"] in {"ok", "error"}
