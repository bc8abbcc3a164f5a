"""The address classifier: every spelling of the host's own addresses is refused, private and
public ones pass, and PAYRECON_RELAY_ALLOW_NETWORKS lets listed networks through."""

from __future__ import annotations

import ipaddress

import pytest

from relay.addresses import forbidden_kind, host_refusal, parse_networks
from relay.endpoints import check_url
from relay.errors import EndpointAddressError

LOOPBACK = parse_networks("127.0.0.0/8")
# Each spelling, and the kind of address it connects to.
OWN_HOSTS = [
    ("127.0.0.1", "loopback"),
    ("2130706433", "loopback"),
    ("0x7f000001", "loopback"),
    ("0177.0.0.1", "loopback"),
    ("127.1", "loopback"),
    ("０x7f000001", "loopback"),  # fullwidth digits, as the IDNA codec reads them
    ("0", "unspecified"),
    ("0.0.0.0", "unspecified"),
    ("[::ffff:127.0.0.1]", "loopback"),
    ("[::1]", "loopback"),
    ("[::]", "unspecified"),
    ("localhost", "loopback"),
    ("LOCALHOST.", "loopback"),
    ("api.localhost", "loopback"),
    ("169.254.169.254", "link-local"),
    ("[::ffff:169.254.169.254]", "link-local"),
    ("[fe80::1]", "link-local"),
    ("224.0.0.1", "multicast"),
    ("[ff02::1]", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
]
ALLOWED_HOSTS = [
    "10.0.0.7",
    "172.16.0.1",
    "192.168.1.20",
    "[::ffff:10.0.0.1]",
    "[fd00::7]",
    "8.8.8.8",
    "orders.example.com",
    "orders.internal",
]


@pytest.mark.parametrize(("host", "kind"), OWN_HOSTS)
def test_every_spelling_of_an_own_address_is_refused_by_its_kind(host: str, kind: str) -> None:
    """Decimal, hex, octal, short forms, IPv4-mapped IPv6 and loopback names are judged by the
    address they connect to, and the refusal names its kind."""
    refusal = host_refusal(host)
    assert refusal is not None and f" {kind} " in refusal


@pytest.mark.parametrize(("host", "kind"), OWN_HOSTS)
def test_an_endpoint_url_on_an_own_address_is_refused(host: str, kind: str) -> None:
    """check_url refuses each of them with EndpointAddressError naming the allow setting."""
    with pytest.raises(EndpointAddressError) as caught:
        check_url(f"http://{host}:8080/hook", allow=())
    assert kind in str(caught.value) and "PAYRECON_RELAY_ALLOW_NETWORKS" in str(caught.value)
    assert caught.value.field == "url"


@pytest.mark.parametrize("host", ALLOWED_HOSTS)
def test_private_and_public_hosts_and_names_pass(host: str) -> None:
    """Merchants' private networks, public addresses and DNS names are accepted."""
    assert host_refusal(host) is None
    assert check_url(f"http://{host}/hook", allow=()) == f"http://{host}/hook"


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "2130706433", "127.1", "[::ffff:127.0.0.1]", "localhost"]
)
def test_an_allowed_network_lets_its_spellings_through(host: str) -> None:
    """With 127.0.0.0/8 allowed, every spelling of a loopback IPv4 address is accepted."""
    assert host_refusal(host, LOOPBACK) is None
    assert check_url(f"http://{host}:9/x", allow=LOOPBACK) == f"http://{host}:9/x"


def test_an_allowed_network_lets_only_itself_through() -> None:
    """127.0.0.0/8 allowed does not allow ::1, the metadata address or 0.0.0.0."""
    for host in ("[::1]", "169.254.169.254", "0"):
        assert host_refusal(host, LOOPBACK) is not None


def test_networks_parse_from_a_comma_list() -> None:
    """CIDRs, a bare address and blanks between commas are read; host bits are tolerated."""
    assert parse_networks(" 127.0.0.0/8, ::1 ,,169.254.169.254/32") == (
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
        ipaddress.ip_network("169.254.169.254/32"),
    )
    assert parse_networks("") == ()
    assert parse_networks("10.1.2.3/8") == (ipaddress.ip_network("10.0.0.0/8"),)


@pytest.mark.parametrize("bad", ["127.0.0.0/33", "localhost", "10.0.0.0/8/8", "x"])
def test_a_bad_network_is_a_value_error_naming_it(bad: str) -> None:
    """A CIDR that does not parse raises ValueError quoting it."""
    with pytest.raises(ValueError, match="is not a network"):
        parse_networks(f"10.0.0.0/8,{bad}")


def test_forbidden_kind_judges_resolved_addresses() -> None:
    """A resolved address is refused by the same rule (what the send-time check uses)."""
    assert forbidden_kind(ipaddress.ip_address("127.0.0.53")) == "loopback"
    assert forbidden_kind(ipaddress.ip_address("127.0.0.53"), LOOPBACK) is None
    assert forbidden_kind(ipaddress.ip_address("10.0.0.53")) is None
