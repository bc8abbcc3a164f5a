"""payrecon.clients: clients built from settings, ConfigError naming what is missing."""

from __future__ import annotations

import asyncio

import pytest

from payrecon.clients import make_async_client, make_client
from payrecon.errors import ConfigError
from payrecon.settings import Settings
from provider.client import AsyncProviderClient, ProviderClient

KEY = "sk_test_makeclient0123456789"


def test_missing_base_url_names_the_variable() -> None:
    """No base URL is ConfigError on PAYRECON_PROVIDER_BASE_URL."""
    with pytest.raises(ConfigError) as caught:
        make_client(Settings(provider_secret_key=KEY))
    assert caught.value.variable == "PAYRECON_PROVIDER_BASE_URL"
    assert caught.value.reason == "is not set"


def test_missing_key_names_the_variable() -> None:
    """No secret key is ConfigError on PAYRECON_PROVIDER_SECRET_KEY."""
    with pytest.raises(ConfigError) as caught:
        make_async_client(Settings(provider_base_url="http://127.0.0.1:1"))
    assert caught.value.variable == "PAYRECON_PROVIDER_SECRET_KEY"


def test_clients_use_the_settings_timeout() -> None:
    """Both factories pass provider_timeout to the client."""
    settings = Settings(
        provider_base_url="http://127.0.0.1:1", provider_secret_key=KEY, provider_timeout=3.5
    )
    client = make_client(settings)
    async_client = make_async_client(settings)
    assert isinstance(client, ProviderClient) and isinstance(async_client, AsyncProviderClient)
    assert client._core.timeout == 3.5 and async_client._core.timeout == 3.5
    assert KEY not in repr(client)
    client.close()
    asyncio.run(async_client.aclose())
