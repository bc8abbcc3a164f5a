"""Composition helpers for the reconciler: the alert sink and the lookup client from settings."""

from __future__ import annotations

from payrecon.errors import ConfigError
from payrecon.settings import Settings
from provider.client import AsyncProviderClient
from reconcile.alerts import AlertSink, AppriseSink
from reconcile.errors import AlertURLError


def make_alert_sink(settings: Settings) -> AlertSink | None:
    """The apprise sink for PAYRECON_ALERT_URLS, None when unset (alerts are logged only)."""
    if not settings.alert_urls:
        return None
    try:
        return AppriseSink(
            settings.alert_urls,
            allow_insecure=settings.alert_allow_insecure,
            timeout=settings.alert_timeout,
        )
    except AlertURLError as exc:
        raise ConfigError("PAYRECON_ALERT_URLS", str(exc)) from None


def make_lookup_client(settings: Settings) -> AsyncProviderClient:
    """The async client the reconciler looks transfers up with.

    No retries inside the client: a failed lookup is retried by the reconciler's own
    durable per-transfer backoff, so one slow transfer never holds a concurrency slot.
    """
    if settings.provider_base_url is None:
        raise ConfigError("PAYRECON_PROVIDER_BASE_URL", "is not set")
    if settings.provider_secret_key is None:
        raise ConfigError("PAYRECON_PROVIDER_SECRET_KEY", "is not set")
    return AsyncProviderClient(
        settings.provider_base_url,
        settings.provider_secret_key,
        timeout=settings.provider_timeout,
        max_retries=0,
    )
