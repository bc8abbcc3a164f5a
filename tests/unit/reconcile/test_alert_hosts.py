"""Alert target hosts are judged by the address the socket layer would connect to."""

from __future__ import annotations

import ipaddress

import pytest

from reconcile.alert_hosts import host_address, refused_host
from reconcile.alerts import check_alert_url
from reconcile.errors import AlertURLError


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # one decimal number
        ("0x7f000001", "127.0.0.1"),  # one hex number
        ("0X7F000001.", "127.0.0.1"),  # upper case, trailing root dot
        ("017700000001", "127.0.0.1"),  # one octal number
        ("0177.0.0.1", "127.0.0.1"),  # octal part
        ("0x7f.1", "127.0.0.1"),  # two parts, hex
        ("127.1", "127.0.0.1"),  # two parts
        ("10.1", "10.0.0.1"),
        ("0", "0.0.0.0"),
        ("１２７。０。０。１", "127.0.0.1"),  # fullwidth digits and dots: IDNA maps them
        ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
        ("[fe80::1%eth0]", "fe80::1%eth0"),
        ("alerts.example.com", None),  # a DNS name: not resolved here
        ("08.0.0.1", None),  # not a number the socket layer accepts either
        ("1e100.net", None),
    ],
)
def test_numeric_hosts_parse_as_the_socket_layer_does(host: str, address: str | None) -> None:
    """Decimal, hex, octal, short and IDNA-spelled hosts map to the address they connect to."""
    expected = None if address is None else ipaddress.ip_address(address)
    assert host_address(host) == expected


@pytest.mark.parametrize(
    ("host", "refused"),
    [
        ("127.0.0.1", True),
        ("2130706433", True),
        ("0x7f000001", True),
        ("0177.0.0.1", True),
        ("127.1", True),
        ("017700000001", True),
        ("１２７。０。０。１", True),
        ("0", True),  # unspecified
        ("0.0.0.0", True),
        ("[::]", True),
        ("[::1]", True),
        ("[::ffff:127.0.0.1]", True),  # IPv4-mapped loopback
        ("[::ffff:7f00:1]", True),
        ("[::127.0.0.1]", True),  # IPv4-compatible loopback
        ("[64:ff9b::a00:1]", True),  # NAT64 of 10.0.0.1
        ("[2002:7f00:1::]", True),  # 6to4 of 127.0.0.1
        ("169.254.169.254", True),  # link-local (cloud metadata)
        ("2851995903", True),  # 169.254.169.255 spelled as one number
        ("0xa9fea9fe", True),  # 169.254.169.254 in hex
        ("[fe80::1%eth0]", True),
        ("10.1", True),  # private 10.0.0.1
        ("0xc0a80001", True),  # 192.168.0.1
        ("100.64.0.1", True),  # shared address space
        ("localhost", True),
        ("LOCALHOST.", True),
        ("printer.local", True),
        ("db.internal", True),
        ("8.8.8.8", False),
        ("134744072", False),  # 8.8.8.8 as one number: public, allowed
        ("[2606:4700:4700::1111]", False),
        ("[::ffff:8.8.8.8]", False),
        ("alerts.example.com", False),
    ],
)
def test_refused_hosts(host: str, refused: bool) -> None:
    """Loopback, private, link-local and unspecified hosts are refused in every spelling."""
    assert refused_host(host) is refused


@pytest.mark.parametrize(
    "url",
    [
        "jsons://2130706433:8443/hook",
        "jsons://0x7f000001/hook",
        "jsons://user:pw@0x7f000001:8443/hook",
        "jsons://017700000001/hook",
        "jsons://[::ffff:127.0.0.1]/hook",
        "jsons://0xa9fea9fe/latest",
        "mailtos://user:pw@0x7f000001?to=ops@example.com",
        # The SMTP relay named apart from the sender's domain is where the mail goes.
        "mailtos://user:pw@example.com?to=ops@example.com&smtp=0x7f000001",
        "mailtos://user:pw@example.com?to=ops@example.com&smtp=127.0.0.1",
    ],
)
def test_alert_urls_with_numeric_local_hosts_are_refused(url: str) -> None:
    """An alert URL naming a local host in a numeric spelling is refused like the dotted one."""
    with pytest.raises(AlertURLError, match="loopback or private host"):
        check_alert_url(url, allow_insecure=False)
    check_alert_url(url, allow_insecure=True)  # PAYRECON_ALERT_ALLOW_INSECURE=1 lifts it
