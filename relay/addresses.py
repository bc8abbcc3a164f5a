"""Which addresses payrecon may connect to: hosts read the way the socket layer reads them, pure.

The one address classifier of the project: the relay refuses endpoints on the host's own
networks with it (docs/rules.md: Robustness rules, "Relay destinations are not a way into the
host"), and the alert check (reconcile.alert_hosts) reads hosts through it too.

`ipaddress` only knows the canonical forms, but the resolver (glibc's `inet_aton`, which
`getaddrinfo` uses for numeric hosts) also connects `2130706433`, `0x7f000001`, `0177.0.0.1`,
`127.1` and `0` to 127.0.0.1 or 0.0.0.0, and Python's socket module first passes a host
through the IDNA codec (`１２７。０。０。１` becomes `127.0.0.1`). A host is judged by the
address the socket layer would connect to, never by how it is spelled; an IPv6 address that
carries an IPv4 one (`::ffff:127.0.0.1`) is judged by both.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Iterable, Sequence

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Names every resolver answers with a loopback address without asking DNS (RFC 6761 §6.3).
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
LOOPBACK_SUFFIX = ".localhost"
# What such a name is judged as before it is resolved.
_LOOPBACK = ipaddress.IPv4Address("127.0.0.1")
# IPv6 prefixes that carry an IPv4 address in their last 32 bits (IPv4-compatible, RFC 4291
# §2.5.5.1; NAT64 well-known prefix, RFC 6052): judged by the IPv4 address they carry.
_EMBEDDING = (ipaddress.IPv6Network("::/96"), ipaddress.IPv6Network("64:ff9b::/96"))
# "This network" (RFC 791): Linux connects 0.0.0.0 (and `0`) to the host itself, and
# `ipaddress` calls only 0.0.0.0 unspecified.
_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")


def canonical_name(host: str) -> str:
    """`host` as the resolver sees it: brackets and a final dot gone, IDNA-encoded, lower case."""
    name = host.strip().strip("[]").rstrip(".")
    # What socket.getaddrinfo does with a str host: fullwidth digits and ideographic dots
    # become ASCII, so the checks below see what the resolver will see. A name the codec
    # refuses cannot be connected to at all, and is judged as spelled.
    with contextlib.suppress(UnicodeError):
        name = name.encode("idna").decode("ascii")
    return name.rstrip(".").lower()


def host_address(host: str) -> Address | None:
    """The IP address `host` connects to without a DNS lookup, or None for a DNS name."""
    name = canonical_name(host)
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


def is_loopback_name(host: str) -> bool:
    """True for `localhost` and the other names that always mean the host itself."""
    name = canonical_name(host)
    return name in LOOPBACK_NAMES or name.endswith(LOOPBACK_SUFFIX)


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, IPv4-compatible, NAT64), or None."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in network for network in _EMBEDDING):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _kind(address: Address) -> str | None:
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified or address in _THIS_NETWORK:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if address.is_reserved or (
        isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    ):
        return "reserved"
    return None


def forbidden_kind(address: Address, allow: Sequence[Network] = ()) -> str | None:
    """Why a connection to `address` could reach into the host or its cloud (`loopback`,
    `link-local`, `unspecified`, `multicast`, `reserved`), or None when it may be made:
    public and private addresses, and any address inside one of the `allow` networks."""
    embedded = embedded_ipv4(address)
    candidates = [address] if embedded is None else [embedded, address]
    if any(candidate in network for candidate in candidates for network in allow):
        return None
    return _kind(judged_address(address))


def judged_address(address: Address) -> Address:
    """The address a connection to `address` is judged by: the IPv4 one it carries, if any
    (`::ffff:127.0.0.1` is loopback and `::ffff:10.0.0.1` private, whatever `ipaddress` calls
    their IPv6 prefixes), but `::1` and `::` themselves."""
    embedded = embedded_ipv4(address)
    if embedded is None or address.is_loopback or address.is_unspecified:
        return address
    return embedded


def host_refusal(host: str, allow: Sequence[Network] = ()) -> str | None:
    """Why `host` (a URL's host, as written) is refused without resolving it, or None: a
    numeric host in any spelling is judged by its address, a loopback name as 127.0.0.1,
    and any other DNS name passes (it is judged when it is resolved, at connection time)."""
    if is_loopback_name(host):
        kind = forbidden_kind(_LOOPBACK, allow)
        return None if kind is None else f"{host} is {_a(kind)} name"
    address = host_address(host)
    if address is None:
        return None
    kind = forbidden_kind(address, allow)
    if kind is None:
        return None
    spelled = canonical_name(host)
    meant = judged_address(address)
    shown = spelled if spelled == str(meant) else f"{spelled} (= {meant})"
    return f"{shown} is {_a(kind)} address"


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def parse_networks(value: str | Iterable[str]) -> tuple[Network, ...]:
    """The networks of a comma list of CIDRs (`127.0.0.0/8,::1/128`); ValueError naming a
    bad one. An address alone is a network of one."""
    items = value.split(",") if isinstance(value, str) else list(value)
    networks: list[Network] = []
    for item in (part.strip() for part in items):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not a network such as 127.0.0.0/8") from None
    return tuple(networks)
