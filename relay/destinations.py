"""What an endpoint's URL names: its kind (from the scheme), its options, its credentials. Pure.

An endpoint is an HTTP URL or a broker address (docs/rules.md: Relay destinations: message
brokers). The scheme says which transport delivers to it (relay/transports/); each kind has its
own options in the query string, checked here when the endpoint is registered, so a worker
never meets a URL its transport cannot read. Credentials (`user:password@`) of a broker URL are
split off here: the ledger keeps the URL without them and the credentials sealed
(relay.keys), so no list, log, audit row or alert can show them.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit


class Kind(enum.StrEnum):
    """The kinds of destination, one transport each."""

    HTTP = "http"
    AMQP = "amqp"
    NATS = "nats"
    REDIS = "redis"


SCHEMES = {
    "http": Kind.HTTP,
    "https": Kind.HTTP,
    "amqp": Kind.AMQP,
    "amqps": Kind.AMQP,
    "nats": Kind.NATS,
    "redis": Kind.REDIS,
    "rediss": Kind.REDIS,
}
DEFAULT_PORTS = {"amqp": 5672, "amqps": 5671, "nats": 4222, "redis": 6379, "rediss": 6379}
# The options each kind reads from the query string.
OPTIONS = {
    Kind.HTTP: None,  # an HTTP URL's query is the consumer's own
    Kind.AMQP: frozenset({"exchange", "routing_key"}),
    Kind.NATS: frozenset({"subject", "stream"}),
    Kind.REDIS: frozenset({"stream", "maxlen"}),
}
# What `{type}` in a routing key or subject becomes: the event's type.
TYPE_FIELD = "{type}"
DEFAULT_ROUTING_KEY = TYPE_FIELD
DEFAULT_SUBJECT = "payrecon.events." + TYPE_FIELD
DEFAULT_STREAM = "payrecon.events"
MAX_MAXLEN = 1_000_000_000

_EXCHANGE = re.compile(r"^[A-Za-z0-9_.:\-]{1,255}$")
_STREAM_NAME = re.compile(r"^[A-Za-z0-9_\-]{1,255}$")  # JetStream: no dots, spaces, wildcards
_SUBJECT_TOKEN = re.compile(r"^[A-Za-z0-9_\-{}]+$")


class DestinationError(ValueError):
    """A URL no transport can deliver to; the message says why (the caller's input error)."""


@dataclass(frozen=True, slots=True)
class Destination:
    """A checked endpoint URL: its kind, the URL without credentials, the credentials (the
    URL's `user:password` as written, or None), and its options."""

    kind: Kind
    url: str
    credentials: str | None
    options: dict[str, str]


def kind_of(url: str) -> Kind:
    """The kind of a stored endpoint URL (HTTP for anything not a broker scheme)."""
    scheme = url.partition(":")[0].lower()
    return SCHEMES.get(scheme, Kind.HTTP)


def split_credentials(url: str) -> tuple[str, str | None]:
    """The URL without its `user:password@`, and that user information (None when none)."""
    parts = urlsplit(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at:
        return url, None
    bare = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    return bare, userinfo


def join_credentials(url: str, credentials: str | None) -> str:
    """The URL with the user information put back (what a transport connects with)."""
    if not credentials:
        return url
    parts = urlsplit(url)
    netloc = f"{credentials}@{parts.netloc}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def login(credentials: str | None) -> tuple[str | None, str | None]:
    """The user name and password of user information (percent-decoded)."""
    if not credentials:
        return None, None
    user, colon, password = credentials.partition(":")
    return unquote(user) or None, unquote(password) if colon else None


def options(url: str) -> dict[str, str]:
    """A broker URL's query options (checked at registration: each at most once)."""
    return dict(_options(url))


@functools.lru_cache(maxsize=256)
def _options(url: str) -> tuple[tuple[str, str], ...]:
    # Read at every attempt to a broker: parsing the URL again each time was a few per cent
    # of a fast broker's attempt (bench/RESULTS.md section 15).
    return tuple(parse_qsl(urlsplit(url).query, keep_blank_values=True))


def port_of(url: str) -> int:
    """The URL's port, or its scheme's default."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return parts.port or DEFAULT_PORTS.get(scheme, 443 if scheme == "https" else 80)


def check(url: str) -> Destination:
    """The URL's destination when its kind's transport can deliver to it; DestinationError
    says why not. The host is not judged here (relay.endpoints checks it against the address
    rules)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    kind = SCHEMES.get(scheme)
    if kind is None:
        raise DestinationError(
            "the URL must start with http:// or https:// (or a broker's amqp://, amqps://, "
            "nats://, redis://, rediss://)"
        )
    bare, credentials = split_credentials(url)
    if kind is Kind.HTTP:
        if credentials is not None:
            raise DestinationError(
                "the URL holds credentials; endpoints authenticate payrecon by its signature"
            )
        return Destination(kind, url, None, {})
    if credentials is not None and not credentials.strip(":"):
        raise DestinationError("the URL's user information is empty")
    pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False)
    found: dict[str, str] = {}
    allowed = OPTIONS[kind] or frozenset()
    for name, value in pairs:
        if name not in allowed:
            names = ", ".join(sorted(allowed))
            raise DestinationError(f"{scheme}:// URLs take only these options: {names}")
        if name in found:
            raise DestinationError(f"the option {name} is given twice")
        if not value.strip():
            raise DestinationError(f"the option {name} is empty")
        found[name] = value
    {Kind.AMQP: _check_amqp, Kind.NATS: _check_nats, Kind.REDIS: _check_redis}[kind](
        parts.path, found
    )
    return Destination(kind, bare, credentials, found)


def _check_amqp(path: str, found: dict[str, str]) -> None:
    vhost = unquote(path[1:]) if path.startswith("/") else path
    if "/" in path[1:]:
        raise DestinationError("an amqp:// URL's path is one virtual host (write / as %2F)")
    if len(vhost) > 255:
        raise DestinationError("the virtual host is longer than 255 characters")
    exchange = found.get("exchange")
    if exchange is not None and not _EXCHANGE.match(exchange):
        raise DestinationError(
            "the exchange name may hold only letters, digits, - _ . : (at most 255)"
        )
    routing_key = found.get("routing_key", DEFAULT_ROUTING_KEY)
    if len(routing_key.encode()) > 255:
        raise DestinationError("the routing key is longer than 255 bytes")


def _check_nats(path: str, found: dict[str, str]) -> None:
    if path not in {"", "/"}:
        raise DestinationError("a nats:// URL has no path: name the subject with ?subject=")
    subject = found.get("subject", DEFAULT_SUBJECT)
    if len(subject) > 255 or not all(_SUBJECT_TOKEN.match(token) for token in subject.split(".")):
        raise DestinationError(
            "the subject must be dot-separated tokens of letters, digits, - and _ "
            "(no wildcards; {type} stands for the event type)"
        )
    stream = found.get("stream")
    if stream is not None and not _STREAM_NAME.match(stream):
        raise DestinationError("the stream name may hold only letters, digits, - and _")


def _check_redis(path: str, found: dict[str, str]) -> None:
    database = path[1:] if path.startswith("/") else path
    if database and (not database.isascii() or not database.isdigit() or int(database) > 65535):
        raise DestinationError("a redis:// URL's path is a database number, such as /0")
    stream = found.get("stream", DEFAULT_STREAM)
    if len(stream) > 512:
        raise DestinationError("the stream key is longer than 512 characters")
    maxlen = found.get("maxlen")
    if maxlen is not None and not (
        maxlen.isascii() and maxlen.isdigit() and 1 <= int(maxlen) <= MAX_MAXLEN
    ):
        raise DestinationError(f"maxlen must be a whole number from 1 to {MAX_MAXLEN}")


def expand(template: str, event_type: str) -> str:
    """A routing key or subject with `{type}` made the event's type."""
    return template.replace(TYPE_FIELD, event_type)
