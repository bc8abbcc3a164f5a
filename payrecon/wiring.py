"""Composition helpers: the alert sink, and the relay worker, from settings."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine

from ledger.types import utcnow
from payrecon.errors import ConfigError
from payrecon.settings import Settings
from reconcile.alert_plan import AlertRules, Item, rules_of
from reconcile.alerts import AlertSink, AppriseSink, dispatch
from reconcile.errors import AlertURLError
from relay.attempts import Notice
from relay.keys import SecretBox
from relay.recorder import AlertFn
from relay.worker import Worker, WorkerConfig


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


def alert_rules(settings: Settings) -> AlertRules:
    """How alerts group and how many go out an hour (PAYRECON_ALERT_GROUP_AFTER…)."""
    return rules_of(settings)


def keyed_alert(engine: Engine, sink: AlertSink | None, rules: AlertRules | None = None) -> AlertFn:
    """The worker's alerts: each claimed once by its key in the ledger, many of one kind sent
    as one message, within the hour's cap (reconcile.alerts)."""

    def alert(notices: Sequence[Notice]) -> None:
        items = [
            Item(
                key=n.key,
                kind=n.kind,
                title=n.title,
                body=n.body,
                reference=n.name,
                noun="endpoint",
            )
            for n in notices
        ]
        dispatch(engine, sink, items, rules=rules or AlertRules(), now=utcnow(), findings=False)

    return alert


def make_worker(settings: Settings, engine: Engine, box: SecretBox) -> Worker:
    """A relay worker on `engine` with the settings' schedule and alert sink (ConfigError for
    bad alert URLs)."""
    sink = make_alert_sink(settings)
    alert = keyed_alert(engine, sink, alert_rules(settings))
    return Worker(engine, box, worker_config(settings), alert=alert)
