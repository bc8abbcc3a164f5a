"""Served apps for the HTTP tests: a receiver with the admin token, and one paying through a
sandbox, and the env builders the CLI tests share."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import pytest
from sqlalchemy import Engine

from payrecon.app import create_app
from payrecon.settings import Settings, load_settings
from provider.client import ProviderClient
from sandbox.app import create_app as create_sandbox
from sandbox.config import SandboxConfig
from tests.support.servers import running_server

ADMIN = "admin-token-0123456789"
RELAY_KEYS = "relay-key-0123456789-abcdefghijklmnopq"
StartReceiver = Callable[..., contextlib.AbstractContextManager[str]]


def bearer(token: str = ADMIN) -> dict[str, str]:
    """The Authorization header for `token` (the admin token by default)."""
    return {"authorization": f"Bearer {token}"}


def cli_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a `payrecon` command on the ledger at `database_url`."""
    return {"PAYRECON_DATABASE_URL": database_url, **extra}


class RunningSandbox(Protocol):
    """What `sandbox_settings` reads of a running sandbox (tests/integration/reconcile/helpers)."""

    base_url: str
    config: SandboxConfig


def sandbox_settings(database_url: str, sandbox: RunningSandbox, **extra: str) -> dict[str, str]:
    """The PAYRECON_* variables of a command on the ledger at `database_url` whose provider is
    `sandbox` (with its own key), plus `extra` (full variable names)."""
    return {
        "PAYRECON_DATABASE_URL": database_url,
        "PAYRECON_PROVIDER_BASE_URL": sandbox.base_url,
        "PAYRECON_PROVIDER_SECRET_KEY": sandbox.config.secret_key,
        **extra,
    }


@pytest.fixture
def start_receiver(database_url: str, engine: Engine) -> StartReceiver:
    """Start a receiver with extra settings; yields its base URL."""

    @contextlib.contextmanager
    def start(**overrides: Any) -> Iterator[str]:
        settings: Settings = load_settings(database_url=database_url, **overrides)
        with running_server(create_app(settings, engine=engine)) as url:
            yield url

    return start


@pytest.fixture
def receiver_url(start_receiver: StartReceiver) -> Iterator[str]:
    """A receiver with default settings and an admin token."""
    with start_receiver(admin_token=ADMIN) as url:
        yield url


@contextlib.contextmanager
def payout_stack(
    database_url: str, engine: Engine, *, secret_key: str | None = None, **config: Any
) -> Iterator[tuple[str, str]]:
    """A sandbox (with `config`) and a receiver paying through it with `secret_key` (the
    sandbox's own by default); yields (receiver URL, sandbox URL)."""
    options: dict[str, Any] = {
        "complete_after": None,
        "seed": 3,
        "webhook_url": "http://127.0.0.1:9/webhook",
        **config,
    }
    sandbox = SandboxConfig(**options)
    key = secret_key or sandbox.secret_key
    with running_server(create_sandbox(sandbox)) as sandbox_url:
        settings = load_settings(database_url=database_url, admin_token=ADMIN)
        app = create_app(
            settings,
            engine=engine,
            payout_client=ProviderClient(sandbox_url, key),
        )
        with running_server(app) as url:
            yield url, sandbox_url


@pytest.fixture
def stack(database_url: str, engine: Engine) -> Iterator[tuple[str, str]]:
    """A sandbox and a receiver wired to it; yields (receiver URL, sandbox URL)."""
    with payout_stack(database_url, engine) as urls:
        yield urls
