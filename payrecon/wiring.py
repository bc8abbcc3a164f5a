"""Composition helpers for the reconciler: the alert sink from settings."""

from __future__ import annotations

from payrecon.errors import ConfigError
from payrecon.settings import Settings
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
