"""A real receiver on a free loopback port, over the parametrized test database."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine

from payrecon.settings import Settings, load_settings
from receiver.app import create_app
from tests.support.servers import running_server

ADMIN = "admin-token-0123456789"
StartReceiver = Callable[..., contextlib.AbstractContextManager[str]]


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
