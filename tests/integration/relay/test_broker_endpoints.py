"""Broker endpoints through the admin API and console: kinds validated per scheme (400 with the
reason), credentials sealed and shown nowhere — answers, lists, audit, console pages."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import Engine, select

from ledger.db import read_session
from ledger.models import AuditEntry, RelayEndpoint
from relay.keys import SecretBox
from tests.integration.relay.conftest import AUTH, RELAY_KEYS

PASSWORD = "Pa55-w0rd-never-shown"
URLS = [
    f"amqp://payrecon:{PASSWORD}@10.0.0.9:5672/prod?exchange=orders",
    f"nats://payrecon:{PASSWORD}@10.0.0.9:4222?subject=orders.{{type}}&stream=ORDERS",
    f"redis://payrecon:{PASSWORD}@10.0.0.9:6379/1?stream=orders&maxlen=1000",
]


@pytest.mark.parametrize("url", URLS)
def test_broker_credentials_are_sealed_and_shown_nowhere(
    relay_url: str, engine: Engine, url: str
) -> None:
    """POST, GET, PATCH, the audit log and the console show the URL without user:password;
    the ledger keeps them sealed under PAYRECON_RELAY_KEYS."""
    created = httpx.post(f"{relay_url}/api/endpoints", json={"url": url}, headers=AUTH)
    assert created.status_code == 201, created.text
    endpoint_id = created.json()["id"]
    bare = url.replace(f"payrecon:{PASSWORD}@", "")
    assert created.json()["url"] == bare
    patched = httpx.patch(
        f"{relay_url}/api/endpoints/{endpoint_id}",
        json={"url": url.replace("10.0.0.9", "10.0.0.10")},
        headers=AUTH,
    )
    assert patched.status_code == 200, patched.text
    pages = [
        created.text,
        patched.text,
        httpx.get(f"{relay_url}/api/endpoints", headers=AUTH).text,
        httpx.get(f"{relay_url}/api/endpoints/{endpoint_id}", headers=AUTH).text,
        httpx.get(f"{relay_url}/api/audit", headers=AUTH).text,
        httpx.get(f"{relay_url}/console/endpoints", headers=AUTH).text,
        httpx.get(f"{relay_url}/console/audit", headers=AUTH).text,
    ]
    for page in pages:
        assert PASSWORD not in page
    assert "10.0.0.10" in pages[2]
    with read_session(engine) as session:
        endpoint = session.execute(select(RelayEndpoint)).scalar_one()
        audit = " ".join(f"{row.detail}" for row in session.execute(select(AuditEntry)).scalars())
    assert PASSWORD not in endpoint.url and PASSWORD not in audit
    assert endpoint.credentials_sealed is not None
    assert SecretBox([RELAY_KEYS]).open(endpoint.credentials_sealed) == f"payrecon:{PASSWORD}"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("amqp://10.0.0.9/?exchange=a&exchange=b", "twice"),
        ("nats://10.0.0.9?subject=a.*", "wildcards"),
        ("redis://10.0.0.9/0?maxlen=lots", "maxlen"),
        ("kafka://10.0.0.9:9092", "http://"),
        ("redis://169.254.169.254/0", "link-local"),
        (f"amqp://u:{PASSWORD}@[::1/", "not a URL"),
    ],
)
def test_bad_broker_urls_are_a_4xx_naming_the_url(relay_url: str, url: str, reason: str) -> None:
    """A malformed or refused broker URL is a 400/422 about `url` with the reason, never a 500,
    and never echoes a password."""
    answer = httpx.post(f"{relay_url}/api/endpoints", json={"url": url}, headers=AUTH)
    assert answer.status_code in {400, 422}, answer.text
    assert reason in answer.text
    assert PASSWORD not in answer.text
