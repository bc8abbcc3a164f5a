"""Broker URLs (PRODUCT.md: Relay destinations: message brokers): kinds from the scheme, each
kind's options checked at registration, credentials split off, host address rules applied."""

from __future__ import annotations

import pytest

from relay import destinations
from relay.addresses import parse_networks
from relay.destinations import Kind
from relay.endpoints import check_destination, check_url
from relay.errors import EndpointAddressError, EndpointInputError

GOOD = [
    ("amqp://mq.internal/?exchange=orders", Kind.AMQP),
    ("amqps://u:p@mq.example:5671/prod?exchange=orders&routing_key=payrecon.{type}", Kind.AMQP),
    ("amqp://10.0.0.5", Kind.AMQP),
    ("nats://nats.internal:4222?subject=orders.{type}&stream=ORDERS", Kind.NATS),
    ("nats://token@nats.internal", Kind.NATS),
    ("redis://redis.internal:6379/2?stream=orders&maxlen=100000", Kind.REDIS),
    ("rediss://:pw@redis.example/0", Kind.REDIS),
    ("https://hooks.example/x?token=1", Kind.HTTP),
]
BAD = [
    ("amqp://mq.internal/?exchange=a&exchange=b", "twice"),
    ("amqp://mq.internal/?queue=x", "take only these options"),
    ("amqp://mq.internal/?exchange=", "empty"),
    ("amqp://mq.internal/?exchange=bad%20name", "exchange name"),
    ("amqp://mq.internal/a/b", "one virtual host"),
    ("amqp://mq.internal/?routing_key=" + "k" * 256, "longer than 255"),
    ("nats://nats.internal/path", "no path"),
    ("nats://nats.internal?subject=orders.*", "no wildcards"),
    ("nats://nats.internal?subject=orders..x", "dot-separated"),
    ("nats://nats.internal?stream=A.B", "stream name"),
    ("redis://redis.internal/x", "database number"),
    ("redis://redis.internal/0?maxlen=0", "maxlen"),
    ("redis://redis.internal/0?maxlen=-5", "maxlen"),
    ("redis://redis.internal/0?maxlen=1e9", "maxlen"),
    ("redis://redis.internal/0?stream=" + "s" * 513, "longer than 512"),
    ("redis://redis.internal/0?maxlen=5&maxlen=6", "twice"),
    ("amqp://:@mq.internal/", "user information is empty"),
    ("kafka://broker:9092", "http:// or https://"),
    ("amqp:///?exchange=x", "no host"),
    ("nats://nats.internal:0", "1-65535"),
    ("redis://redis.internal:99999", "not a URL"),
    ("nats://nats.internal#frag", "fragment"),
    ("http://user:pw@hooks.example/", "credentials"),
]
LOOPBACK_HOSTS = [
    "127.0.0.1",
    "2130706433",
    "0x7f000001",
    "127.1",
    "localhost",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "169.254.169.254",
    "0",
]


@pytest.mark.parametrize(("url", "kind"), GOOD)
def test_broker_and_http_urls_are_accepted_with_their_kind(url: str, kind: Kind) -> None:
    """Each scheme gives its kind, and a well-formed URL of it is accepted."""
    destination = check_destination(url, allow=())
    assert destination.kind is kind
    assert destinations.kind_of(destination.url) is kind


@pytest.mark.parametrize(("url", "reason"), BAD)
def test_malformed_broker_urls_are_refused_saying_why(url: str, reason: str) -> None:
    """Duplicate, unknown, empty, oversized or malformed options are refused at registration."""
    with pytest.raises(EndpointInputError) as caught:
        check_destination(url, allow=())
    assert reason in str(caught.value)
    assert caught.value.field == "url"


@pytest.mark.parametrize("scheme", ["amqp", "nats", "redis"])
@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
def test_broker_hosts_on_the_hosts_own_addresses_are_refused(scheme: str, host: str) -> None:
    """The address rules hold for brokers in every spelling, unless the network is allowed."""
    url = f"{scheme}://{host}:1234"
    with pytest.raises(EndpointAddressError):
        check_destination(url, allow=())
    if host not in {"169.254.169.254", "0"}:
        allowed = parse_networks("127.0.0.0/8,::1/128")
        assert check_destination(url, allow=allowed).kind is destinations.kind_of(url)


def test_credentials_are_split_off_and_never_in_the_stored_url() -> None:
    """`user:password@` leaves the URL for the sealed column; the rest of the URL stays as is."""
    url = "amqps://payrecon:p%40ss:w0rd@mq.example:5671/prod?exchange=orders"
    destination = check_destination(url, allow=())
    assert destination.url == "amqps://mq.example:5671/prod?exchange=orders"
    assert destination.credentials == "payrecon:p%40ss:w0rd"
    assert destinations.login(destination.credentials) == ("payrecon", "p@ss:w0rd")
    assert destinations.join_credentials(destination.url, destination.credentials) == url
    assert check_url(url, allow=()) == destination.url


def test_a_malformed_url_error_never_echoes_the_password() -> None:
    """A parse error quoting the URL's authority shows *** instead of the credentials."""
    with pytest.raises(EndpointInputError) as caught:
        check_destination("redis://user:hunter2@[::1/0", allow=())
    assert "hunter2" not in str(caught.value)


def test_type_placeholders_expand_to_the_event_type() -> None:
    """`{type}` in a routing key or subject is the event's type."""
    assert destinations.expand("payrecon.events.{type}", "transfer.confirmed") == (
        "payrecon.events.transfer.confirmed"
    )
