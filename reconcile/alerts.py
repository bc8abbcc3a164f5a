"""Alerts: claimed in the ledger first (unique `Alert.key`), then sent through apprise.

An alert is one row of `alert`; its key (`finding:{id}:{opened}:{step}`) is
inserted with ON CONFLICT DO NOTHING and only the process whose insert wins
sends it, so a restart or a second reconciler never repeats one. A crash
between the claim and the send loses that alert rather than doubling it (the
row stays `sending`, visible to operators). Acknowledged findings do not alert.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import structlog
from sqlalchemy import Engine, select
from sqlmodel import col

from ledger.db import read_session, write_session
from ledger.events.types import Subject
from ledger.models import Alert, Collection, Finding, Transfer
from ledger.subjects import about
from ledger.types import FindingKind
from ledger.upsert import insert_ignore
from reconcile.alert_hosts import refused_host
from reconcile.alert_markup import Channel, Format, prepare
from reconcile.alert_text import (
    TransferFacts,
    collection_alert,
    finding_alert,
    key_refused_alert,
)
from reconcile.checks import Policy
from reconcile.errors import AlertURLError

logger = structlog.get_logger(__name__)
_FINDINGS = Finding.__table__.c  # type: ignore[attr-defined]

STALE_STEPS = (1, 4, 24)  # multiples of PAYRECON_STALE_AFTER at which stale_pending escalates
# The attributes naming where a plugin connects: its URL host, and the SMTP relay an e-mail
# URL may name separately (`mailtos://…@example.com?smtp=HOST`).
_TARGET_HOSTS = ("host", "smtp_host")


class AlertSink(Protocol):
    """Where alerts go (the test seam); `send` returns None on success, else the error text."""

    def send(self, title: str, body: str) -> str | None: ...


def check_alert_url(url: str, *, allow_insecure: bool) -> None:
    """Refuse plain-text schemes and loopback/private hosts unless `allow_insecure`."""
    import apprise

    plugin = apprise.Apprise.instantiate(url, suppress_exceptions=True)
    if plugin is None:
        raise AlertURLError(f"{_scheme(url)}://… is not a notification URL apprise understands")
    if allow_insecure:
        return
    scheme = _scheme(url)
    plain = plugin.protocol if isinstance(plugin.protocol, tuple | list) else (plugin.protocol,)
    if scheme in {"http"} or scheme in {p for p in plain if p}:
        secure = plugin.secure_protocol
        hint = f" (use {secure if isinstance(secure, str) else secure[0]}://)" if secure else ""
        raise AlertURLError(f"{scheme}:// sends alerts in plain text{hint}")
    # Only self-hosted targets (a plugin with a plain variant) name a host we must vet;
    # for services like slack:// the "host" is a token.
    hosts = (getattr(plugin, name, None) for name in _TARGET_HOSTS)
    if any(plain) and any(host and refused_host(str(host)) for host in hosts):
        raise AlertURLError(f"{scheme}:// points at a loopback or private host")


def _scheme(url: str) -> str:
    return url.partition("://")[0].lower()


def _outbound_url(url: str, timeout: float) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.setdefault("cto", f"{timeout:g}")
    query.setdefault("rto", f"{timeout:g}")
    query.setdefault("redirect", "no")  # a redirect could lead an alert to a private host
    # Alerts are plain text (PRODUCT.md): a `?format=` in the URL is dropped so every plugin
    # keeps its native format and `reconcile.alert_markup` escapes for exactly that format
    # (forcing `text` made Markdown-only services like Rocket.Chat skip all escaping).
    query.pop("format", None)
    return urlunsplit(parts._replace(query=urlencode(query)))


def _channel(plugin: Any) -> Channel:
    import apprise

    schemes: set[str] = set()
    for attribute in ("protocol", "secure_protocol"):
        value = getattr(plugin, attribute, None)
        names = value if isinstance(value, tuple | list) else (value,)
        schemes.update(str(name).lower() for name in names if name)
    delivers: Format = plugin.resolve_format(apprise.NotifyFormat.TEXT).value
    return Channel(schemes=frozenset(schemes), delivers=delivers)


class AppriseSink:
    """Every configured channel through its own `apprise.Apprise()` instance.

    One instance per channel, because each gets the alert escaped for its own format
    (`reconcile.alert_markup`).
    """

    def __init__(self, urls: Sequence[str], *, allow_insecure: bool, timeout: float) -> None:
        import apprise

        for url in urls:
            check_alert_url(url, allow_insecure=allow_insecure)
        self._channels: list[tuple[Any, Channel]] = []
        for url in urls:
            plugin = apprise.Apprise.instantiate(_outbound_url(url, timeout))
            notifier = apprise.Apprise()
            if plugin is None or not notifier.add(plugin):
                raise AlertURLError(f"{_scheme(url)}://… could not be configured")
            self._channels.append((notifier, _channel(plugin)))
        self.channels = len(urls)

    def send(self, title: str, body: str) -> str | None:
        """Notify every channel as plain text; the error text when one failed (never raises)."""
        import apprise

        errors: list[str] = []
        for notifier, channel in self._channels:
            # Titles and bodies quote webhook content (references, reasons): escaped for the
            # format this channel renders, so `<!channel>`, `*bold*` or `<a href>` stay text.
            ready = prepare(title, body, channel)
            declared = apprise.NotifyFormat(ready.declare)
            try:
                ok = notifier.notify(title=ready.title, body=ready.body, body_format=declared)
            except Exception as exc:  # a broken channel must never stop reconciliation
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            if not ok:
                errors.append("at least one alert channel failed (see apprise's log line)")
        return "; ".join(dict.fromkeys(errors)) or None


def _stale_step(age_seconds: float, stale_after: int) -> int:
    return sum(1 for multiple in STALE_STEPS if age_seconds >= multiple * stale_after)


def _facts(transfer: Transfer) -> TransferFacts:
    return TransferFacts(
        reference=transfer.reference,
        provider_reference=transfer.provider_reference,
        status=transfer.status,
        confirmed=transfer.confirmed,
        amount=transfer.amount,
        fee=transfer.fee,
        provider_amount=transfer.provider_amount,
        provider_fee=transfer.provider_fee,
        webhook_amount=transfer.webhook_amount,
        webhook_fee=transfer.webhook_fee,
    )


def _candidates(engine: Engine, *, now: dt.datetime, policy: Policy) -> list[dict[str, object]]:
    open_unacknowledged = (
        col(Finding.resolved_at).is_(None),
        col(Finding.acknowledged_at).is_(None),
    )
    with read_session(engine) as session:
        rows = session.execute(
            select(Finding, Transfer)
            .join(Transfer, about(_FINDINGS, Subject.TRANSFER, col(Transfer.id)))
            .where(*open_unacknowledged)
            .order_by(col(Finding.id))
        ).all()
        on_collections = session.execute(
            select(Finding, Collection)
            .join(Collection, about(_FINDINGS, Subject.COLLECTION, col(Collection.id)))
            .where(*open_unacknowledged)
            .order_by(col(Finding.id))
        ).all()
        if not rows and not on_collections:
            return []
        ids = [finding.id for finding, _ in (*rows, *on_collections)]
        taken = set(
            session.execute(select(col(Alert.key)).where(col(Alert.finding_id).in_(ids))).scalars()
        )
    wanted = []
    for finding, transfer in rows:
        step, age = 0, (now - transfer.created_at).total_seconds()
        if finding.kind == FindingKind.STALE_PENDING:
            step = max(1, _stale_step(age, policy.stale_after))
        key = f"finding:{finding.id}:{int(finding.opened_at.timestamp())}:{step}"
        if key in taken:
            continue
        title, body = finding_alert(
            finding.kind, finding.detail, _facts(transfer), step=step, age_seconds=age
        )
        wanted.append(_wanted(key, finding, step, title, body, transfer))
    for finding, collection in on_collections:
        # A collection's stale_pending is about its expiry, not its age: one step only.
        step = 1 if finding.kind == FindingKind.STALE_PENDING else 0
        key = f"finding:{finding.id}:{int(finding.opened_at.timestamp())}:{step}"
        if key in taken:
            continue
        title, body = collection_alert(finding.kind, finding.detail, collection)
        wanted.append(_wanted(key, finding, step, title, body, collection))
    return wanted


def _wanted(
    key: str, finding: Finding, step: int, title: str, body: str, subject: Transfer | Collection
) -> dict[str, object]:
    return {
        "key": key,
        "finding_id": finding.id,
        "step": step,
        "title": title,
        "body": body,
        "kind": finding.kind,
        "reference": subject.reference,
        "provider_reference": subject.provider_reference,
    }


def _claim(engine: Engine, wanted: list[dict[str, object]], now: dt.datetime) -> list[int]:
    claimed: list[int] = []
    with write_session(engine) as session:
        for item in wanted:
            alert_id = insert_ignore(
                session,
                Alert.__table__,  # type: ignore[attr-defined]
                {
                    "key": item["key"],
                    "finding_id": item["finding_id"],
                    "step": item["step"],
                    "title": item["title"],
                    "body": item["body"],
                    "status": "sending",
                    "created_at": now,
                },
                ["key"],
            )
            if alert_id is not None:
                item["id"] = alert_id
                claimed.append(int(alert_id))
    return claimed


def _send_claimed(
    engine: Engine, sink: AlertSink | None, items: list[dict[str, object]], now: dt.datetime
) -> tuple[int, int]:
    sent = failed = 0
    outcomes: dict[int, str | None] = {}
    for item in items:
        error = None if sink is None else sink.send(str(item["title"]), str(item["body"]))
        outcomes[int(str(item["id"]))] = error
        log = logger.warning if error else logger.info
        log(
            "alert",
            key=item["key"],
            kind=item.get("kind"),
            reference=item.get("reference"),
            provider_reference=item.get("provider_reference"),
            title=item["title"],
            delivered=sink is not None and error is None,
            error=error,
        )
        failed += error is not None
        sent += error is None
    with write_session(engine) as session:
        for alert_id, error in outcomes.items():
            alert = session.get(Alert, alert_id)
            if alert is None:  # pragma: no cover - rows are never deleted
                continue
            alert.status = "failed" if error else ("sent" if sink is not None else "logged")
            alert.error = error
            alert.sent_at = now if error is None else None
    return sent, failed


def dispatch_alerts(
    engine: Engine, sink: AlertSink | None, *, now: dt.datetime, policy: Policy
) -> tuple[int, int]:
    """Alert every open, unacknowledged finding not yet alerted at its step; (sent, failed).

    With no sink the alert is only logged (PAYRECON_ALERT_URLS unset: log only).
    """
    wanted = _candidates(engine, now=now, policy=policy)
    if not wanted:
        return 0, 0
    claimed = set(_claim(engine, wanted, now))
    return _send_claimed(engine, sink, [w for w in wanted if w.get("id") in claimed], now)


def send_keyed_alert(
    engine: Engine, sink: AlertSink | None, *, key: str, title: str, body: str, now: dt.datetime
) -> bool:
    """Claim `key` and send one alert not tied to a finding; False when already sent."""
    item: dict[str, object] = {
        "key": key,
        "finding_id": None,
        "step": 0,
        "title": title,
        "body": body,
    }
    if not _claim(engine, [item], now):
        return False
    _send_claimed(engine, sink, [item], now)
    return True


def alert_provider_key_refused(engine: Engine, sink: AlertSink | None, *, now: dt.datetime) -> bool:
    """One alert per hour while the provider keeps refusing the key."""
    title, body = key_refused_alert()
    key = f"provider-key-refused:{now.strftime('%Y-%m-%dT%H')}"
    return send_keyed_alert(engine, sink, key=key, title=title, body=body, now=now)
