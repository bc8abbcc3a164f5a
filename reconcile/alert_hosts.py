"""Which hosts an alert may go to: numeric hosts read the way the socket layer reads them, pure.

`ipaddress` only knows the canonical forms, but the resolver (glibc's `inet_aton`, which
`getaddrinfo` uses for numeric hosts) also connects `2130706433`, `0x7f000001`, `0177.0.0.1`
and `127.1` to 127.0.0.1, and Python's socket module first passes a host through the IDNA
codec (`１２７。０。０。１` becomes `127.0.0.1`). A host is judged by the address the
socket layer would connect to, never by how it is spelled.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
LOCAL_SUFFIXES = (".localhost", ".local", ".internal")
# IPv6 prefixes that carry an IPv4 address in their last 32 bits (IPv4-compatible, RFC 4291
# §2.5.5.1; NAT64 well-known prefix, RFC 6052): judged by the IPv4 address they carry.
_EMBEDDING = (ipaddress.IPv6Network("::/96"), ipaddress.IPv6Network("64:ff9b::/96"))


def _canonical_name(host: str) -> str:
    name = host.strip().strip("[]").rstrip(".")
    # What socket.getaddrinfo does with a str host: fullwidth digits and ideographic dots
    # become ASCII, so the checks below see what the resolver will see. A name the codec
    # refuses cannot be connected to at all, and is judged as spelled.
    with contextlib.suppress(UnicodeError):
        name = name.encode("idna").decode("ascii")
    return name.rstrip(".").lower()


def host_address(host: str) -> Address | None:
    """The IP address `host` connects to without a DNS lookup, or None for a DNS name."""
    name = _canonical_name(host)
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        pass
    if ":" in name:
        return None  # not a valid IPv6 literal, and never an IPv4 form either
    try:
        # The socket layer's own parser: decimal, hex and octal parts, 1 to 4 of them.
        packed = socket.inet_aton(name)
    except OSError:
        return None
    return ipaddress.IPv4Address(packed)


def _embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in network for network in _EMBEDDING):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refused_host(host: str) -> bool:
    """True for loopback, private, link-local, unspecified or otherwise non-global hosts.

    DNS names are not resolved here (no blocking lookups at start-up): only local names
    (`localhost`, `*.local`, `*.internal`) are refused by name.
    """
    name = _canonical_name(host)
    if name in LOCAL_NAMES or name.endswith(LOCAL_SUFFIXES):
        return True
    address = host_address(name)
    if address is None:
        return False
    embedded = _embedded_ipv4(address)
    return not address.is_global or (embedded is not None and not embedded.is_global)
