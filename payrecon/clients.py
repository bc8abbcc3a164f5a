"""Provider clients built from settings: the one place the composition root makes one."""

from __future__ import annotations

import httpx

from payrecon.errors import ConfigError
from payrecon.settings import Settings
from provider.client import AsyncProviderClient, ProviderClient
from telemetry.tracing import SyncTraceparentTransport, TraceparentTransport


def _provider_settings(settings: Settings) -> tuple[str, str]:
    if settings.provider_base_url is None:
        raise ConfigError("PAYRECON_PROVIDER_BASE_URL", "is not set")
    if settings.provider_secret_key is None:
        raise ConfigError("PAYRECON_PROVIDER_SECRET_KEY", "is not set")
    return settings.provider_base_url, settings.provider_secret_key.get_secret_value()


def make_client(settings: Settings) -> ProviderClient:
    """A ProviderClient for the configured provider; ConfigError naming what is missing."""
    base_url, secret_key = _provider_settings(settings)
    # The transport adds the W3C traceparent while tracing is on (docs/rules.md: Observability).
    transport = SyncTraceparentTransport(httpx.HTTPTransport())
    return ProviderClient(
        base_url, secret_key, timeout=settings.provider_timeout, transport=transport
    )


def make_async_client(settings: Settings) -> AsyncProviderClient:
    """The async client the reconciler looks transfers up with; ConfigError naming what is
    missing.

    No retries inside the client: a failed lookup is retried by the reconciler's own
    durable per-transfer backoff, so one slow transfer never holds a concurrency slot.
    """
    base_url, secret_key = _provider_settings(settings)
    return AsyncProviderClient(
        base_url,
        secret_key,
        timeout=settings.provider_timeout,
        max_retries=0,
        transport=TraceparentTransport(httpx.AsyncHTTPTransport()),
    )
