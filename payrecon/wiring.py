"""Composition helpers: the alert sink, and the relay worker, from settings."""

from __future__ import annotations

from sqlalchemy import Engine

from ledger.types import utcnow
from payrecon.errors import ConfigError
from payrecon.settings import Settings
from reconcile.alerts import AlertSink, AppriseSink, send_keyed_alert
from reconcile.errors import AlertURLError
from relay.keys import SecretBox
from relay.worker import AlertFn, Worker, WorkerConfig


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


def worker_config(settings: Settings) -> WorkerConfig:
    """The relay worker's settings from PAYRECON_RELAY_*."""
    return WorkerConfig(
        schedule=settings.relay_retry_schedule,
        timeout=settings.relay_timeout,
        concurrency=settings.relay_concurrency,
        disable_after=float(settings.relay_disable_after),
        allow=settings.relay_allow_networks,
    )


def keyed_alert(engine: Engine, sink: AlertSink | None) -> AlertFn:
    """The worker's alert: claimed once by its key in the ledger (reconcile.alerts), then sent."""

    def alert(key: str, title: str, body: str) -> None:
        send_keyed_alert(engine, sink, key=key, title=title, body=body, now=utcnow())

    return alert


def make_worker(settings: Settings, engine: Engine, box: SecretBox) -> Worker:
    """A relay worker on `engine` with the settings' schedule and alert sink (ConfigError for
    bad alert URLs)."""
    sink = make_alert_sink(settings)
    return Worker(engine, box, worker_config(settings), alert=keyed_alert(engine, sink))
