"""A real sandbox on uvicorn, and provider clients pointed at it over HTTP."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from provider.client import ProviderClient
from sandbox.app import create_app
from sandbox.config import SandboxConfig
from tests.support.servers import running_server

# Nothing listens here: deliveries fail fast, which these tests do not look at.
DEAD_WEBHOOK = "http://127.0.0.1:9/hook"


@dataclass
class Sandbox:
    """A running sandbox, a control client for /_sandbox, and recorded client sleeps."""

    url: str
    config: SandboxConfig
    control: httpx.Client
    sleeps: list[float] = field(default_factory=list)

    def client(self, key: str | None = None, **options: Any) -> ProviderClient:
        """A ProviderClient on this sandbox; retries sleep into `sleeps`, not for real."""
        options.setdefault("sleep", self.sleeps.append)
        return ProviderClient(self.url, key or self.config.secret_key, **options)

    def accounts(self, behaviour: str) -> list[dict[str, Any]]:
        """The documented test accounts with this behaviour (GET /_sandbox/accounts)."""
        listed = self.control.get("/_sandbox/accounts").json()["accounts"]
        return [a for a in listed if a["behaviour"] == behaviour]

    def good_account(self) -> tuple[str, str]:
        """(bank_code, account_number) of an account transfers succeed to."""
        account = self.accounts("succeeds")[0]
        return account["bank_code"], account["account_number"]

    def post(self, path: str, body: Any) -> httpx.Response:
        """POST a control route, failing the test if the sandbox refuses it."""
        response = self.control.post(path, json=body)
        assert response.status_code < 300, response.text
        return response

    def wallet(self) -> int:
        """The wallet balance in kobo."""
        return int(self.control.get("/_sandbox/wallet").json()["data"]["balance"])


@pytest.fixture
def start_sandbox() -> Iterator[Callable[..., Sandbox]]:
    """Start sandboxes with config overrides; they stop when the test ends."""
    stack = contextlib.ExitStack()

    def start(**overrides: Any) -> Sandbox:
        options: dict[str, Any] = {
            "webhook_url": DEAD_WEBHOOK,
            "webhook_retry_delays": (),
            "complete_after": None,  # transfers stay pending unless a test forces them
            "seed": 7,
        }
        options.update(overrides)
        config = SandboxConfig(**options)
        url = stack.enter_context(running_server(create_app(config), proxy_headers=False))
        control = stack.enter_context(httpx.Client(base_url=url, timeout=10))
        return Sandbox(url=url, config=config, control=control)

    with stack:
        yield start


@pytest.fixture
def sandbox(start_sandbox: Callable[..., Sandbox]) -> Sandbox:
    """A sandbox with a webhook URL set, a full wallet and no faults."""
    return start_sandbox()


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[ProviderClient]:
    """A ProviderClient with the sandbox's secret key."""
    with sandbox.client() as built:
        yield built
