"""Where alerts go: the apprise sink, one channel per configured URL, and the URL checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import structlog

from reconcile.alert_hosts import refused_host
from reconcile.alert_markup import Channel, Format, prepare
from reconcile.errors import AlertURLError

logger = structlog.get_logger(__name__)

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
    # Alerts are plain text (docs/rules.md): a `?format=` in the URL is dropped so every plugin
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
