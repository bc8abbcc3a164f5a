"""Transient failures over real HTTP: 5xx, 429, timeouts, refused connections."""

from __future__ import annotations

import logging

import pytest

from provider import errors
from provider.client import ProviderClient
from tests.integration.provider.conftest import Sandbox
from tests.support.servers import free_port


def _injected(sandbox: Sandbox, key: str) -> int:
    return int(sandbox.control.get("/_sandbox/faults").json()["injected"].get(key, 0))


def test_lookup_5xx_is_retried_then_unavailable(sandbox: Sandbox) -> None:
    """A lookup answered 503 each time is sent 1 + max_retries times, then raises."""
    sandbox.post("/_sandbox/faults", {"lookup_5xx": 1.0})
    with sandbox.client(max_retries=2) as client, pytest.raises(errors.ProviderUnavailableError):
        client.get_transaction("anything")
    assert _injected(sandbox, "lookup_5xx") == 3
    assert len(sandbox.sleeps) == 2


def test_lookup_429_waits_retry_after(sandbox: Sandbox) -> None:
    """A 429 with Retry-After: 3 is waited out (recorded) before each retry."""
    sandbox.post("/_sandbox/faults", {"lookup_429": 1.0, "lookup_retry_after": 3})
    with sandbox.client(max_retries=1) as client, pytest.raises(errors.RateLimitedError) as caught:
        client.get_transaction("anything")
    assert caught.value.retry_after == 3.0
    assert sandbox.sleeps == [3.0]


def test_lookup_timeout_is_provider_timeout(sandbox: Sandbox) -> None:
    """A lookup slower than the client's timeout is ProviderTimeoutError."""
    sandbox.post("/_sandbox/faults", {"lookup_timeout": 1.0, "lookup_timeout_seconds": 5})
    with (
        sandbox.client(timeout=0.2, max_retries=0) as client,
        pytest.raises(errors.ProviderTimeoutError),
    ):
        client.get_transaction("anything")


def test_connection_refused_is_unavailable() -> None:
    """Nothing listening is ProviderUnavailableError, never an httpx exception."""
    with (
        ProviderClient(
            f"http://127.0.0.1:{free_port()}",
            "sk_test_x0000000",
            max_retries=1,
            sleep=lambda _: None,
        ) as client,
        pytest.raises(errors.ProviderUnavailableError),
    ):
        client.banks()


def test_secret_never_reaches_logs_over_http(
    sandbox: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    """Debug logs of httpx, httpcore and the client never show the key, even on failures."""
    # Named loggers too: another test's logging set-up may have quietened httpx and httpcore.
    for name in (None, "httpx", "httpcore"):
        caplog.set_level(logging.DEBUG, logger=name)
    sandbox.post("/_sandbox/faults", {"lookup_5xx": 1.0})
    with sandbox.client(max_retries=1) as client:
        client.banks()
        with pytest.raises(errors.ProviderUnavailableError) as caught:
            client.get_transaction("anything")
    secret = sandbox.config.secret_key
    assert caplog.records
    assert secret not in caplog.text
    assert secret not in repr([record.msg for record in caplog.records])
    assert secret not in str(caught.value) and secret not in repr(client)
