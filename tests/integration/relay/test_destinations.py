"""Relay destinations are not a way into the host (PRODUCT.md: Robustness rules): own-host
addresses refused at registration (API 400) and at send time (a failed attempt), unless
allowed; a rotation the keys cannot open refused."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import Engine

from ledger.db import read_session
from ledger.models import RelayEndpoint
from payrecon.app import create_app
from payrecon.settings import load_settings
from relay.keys import SecretBox
from tests.integration.relay.conftest import (
    ADMIN,
    AUTH,
    RELAY_KEYS,
)
from tests.support import relay as support
from tests.support.apps import StartReceiver
from tests.support.relay import Consumer
from tests.support.servers import running_server

OWN_URLS = [
    "http://127.0.0.1:9/x",
    "http://2130706433/x",
    "http://0x7f000001/x",
    "http://127.1/x",
    "http://0/x",
    "http://[::ffff:127.0.0.1]/x",
    "http://localhost/x",
    "http://169.254.169.254/latest/meta-data/",
]


@pytest.fixture
def strict_url(start_receiver: StartReceiver) -> Iterator[str]:
    """A served app with the default rule: no own-host network allowed."""
    with start_receiver(admin_token=ADMIN, relay_keys=RELAY_KEYS) as url:
        yield url


@pytest.fixture
def consumer() -> Iterator[tuple[Consumer, str]]:
    """A consumer serving on a free loopback port, and its base URL."""
    found = Consumer()
    with support.serving(found) as url:
        yield found, url


@pytest.mark.parametrize("url", OWN_URLS)
def test_the_api_refuses_an_own_host_endpoint_with_400(strict_url: str, url: str) -> None:
    """POST /api/endpoints with any spelling of an own-host address is 400 naming the setting,
    and nothing is added."""
    answer = httpx.post(f"{strict_url}/api/endpoints", json={"url": url}, headers=AUTH)
    assert answer.status_code == 400
    body = answer.json()
    assert body["error"] == "address_refused" and body["field"] == "url"
    assert "PAYRECON_RELAY_ALLOW_NETWORKS" in body["message"]
    assert httpx.get(f"{strict_url}/api/endpoints", headers=AUTH).json()["items"] == []


def test_a_patch_to_an_own_host_url_is_400_and_changes_nothing(strict_url: str) -> None:
    """PATCH moving a private endpoint to the metadata address is refused; the URL stays."""
    added = httpx.post(
        f"{strict_url}/api/endpoints", json={"url": "http://10.0.0.7/hook"}, headers=AUTH
    ).json()
    moved = httpx.patch(
        f"{strict_url}/api/endpoints/{added['id']}",
        json={"url": "http://[::ffff:169.254.169.254]/"},
        headers=AUTH,
    )
    assert moved.status_code == 400 and "link-local" in moved.json()["message"]
    now = httpx.get(f"{strict_url}/api/endpoints/{added['id']}", headers=AUTH).json()
    assert now["url"] == "http://10.0.0.7/hook"


def test_the_allow_list_lets_loopback_endpoints_in(relay_url: str) -> None:
    """With PAYRECON_RELAY_ALLOW_NETWORKS=127.0.0.0/8, a loopback endpoint in any spelling is
    added, and the metadata address is still refused."""
    for url in ("http://127.0.0.1:9/x", "http://2130706433/x", "http://localhost/x"):
        answer = httpx.post(f"{relay_url}/api/endpoints", json={"url": url}, headers=AUTH)
        assert answer.status_code == 201, answer.text
    metadata = httpx.post(
        f"{relay_url}/api/endpoints", json={"url": "http://169.254.169.254/"}, headers=AUTH
    )
    assert metadata.status_code == 400


def test_a_name_resolving_to_loopback_fails_at_send_time(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """An endpoint whose name resolves to loopback (registered while it was allowed, as a DNS
    name that changed would be) gets a failed attempt saying why, and nothing is sent."""
    found, url = consumer
    port = url.rsplit(":", 1)[1]
    support.add_endpoint(engine, f"http://localhost:{port}/hook")
    support.emit_events(engine, support.add_transfers(engine, 1))

    summary = asyncio.run(support.worker(engine, allow=()).once())

    assert summary.attempted == 1 and summary.delivered == 0
    assert found.received == []
    [attempt] = support.attempts(engine)
    assert attempt.status_code is None and attempt.error is not None
    assert attempt.error.startswith("refused: localhost resolves to")
    assert "loopback" in attempt.error and "PAYRECON_RELAY_ALLOW_NETWORKS" in attempt.error


def test_an_allowed_name_is_delivered_at_its_checked_address(
    engine: Engine, consumer: tuple[Consumer, str]
) -> None:
    """The same endpoint with 127.0.0.0/8 allowed is delivered, and the consumer sees the
    URL's own host name in Host (only the TCP target is the checked address)."""
    found, url = consumer
    port = url.rsplit(":", 1)[1]
    _, secret = support.add_endpoint(engine, f"http://localhost:{port}/hook")
    found.secrets.append(secret)
    support.emit_events(engine, support.add_transfers(engine, 1))

    summary = asyncio.run(support.worker(engine).once())

    assert summary.delivered == 1
    [got] = found.received
    assert got.verified and got.headers["host"] == f"localhost:{port}"


def test_a_rotation_the_keys_cannot_open_is_409_and_changes_nothing(
    relay_url: str, engine: Engine
) -> None:
    """An endpoint sealed under a key no longer configured: rotate-secret answers 409 naming
    PAYRECON_RELAY_KEYS, and its sealed secrets are exactly as before."""
    with running_server_of_key(engine, "another-relay-key-0123456789-abcdefgh") as other:
        added = httpx.post(
            f"{other}/api/endpoints", json={"url": "http://10.0.0.7/hook"}, headers=AUTH
        ).json()
    before = sealed(engine, added["id"])
    rotated = httpx.post(f"{relay_url}/api/endpoints/{added['id']}/rotate-secret", headers=AUTH)
    assert rotated.status_code == 409
    assert rotated.json()["error"] == "conflict"
    assert "PAYRECON_RELAY_KEYS" in rotated.json()["message"]
    assert sealed(engine, added["id"]) == before


def sealed(engine: Engine, endpoint_id: int) -> tuple[str, str | None, object]:
    """An endpoint's sealed secrets and overlap end, as stored."""
    with read_session(engine) as session:
        row = session.get(RelayEndpoint, endpoint_id)
        assert row is not None
        return row.secret_sealed, row.previous_secret_sealed, row.previous_secret_until


def running_server_of_key(engine: Engine, key: str):  # type: ignore[no-untyped-def]
    """A served app on the same ledger whose relay key is `key`."""
    settings = load_settings(
        database_url=str(engine.url.render_as_string(hide_password=False)),
        admin_token=ADMIN,
        relay_keys=key,
    )
    assert SecretBox([key])  # a usable key
    return running_server(create_app(settings, engine=engine))
