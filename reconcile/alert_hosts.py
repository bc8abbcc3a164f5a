"""Which hosts an alert may go to: the project's one address classifier (relay.addresses) with
the alerts' stricter rule, pure.

Alerts go to services on the internet, so besides the host's own addresses (loopback,
link-local, unspecified, multicast, reserved) private ones and local names (`*.local`,
`*.internal`) are refused too; a relay endpoint may live on a private network.
"""

from __future__ import annotations

from relay.addresses import (
    LOOPBACK_NAMES,
    canonical_name,
    embedded_ipv4,
    host_address,
    is_loopback_name,
)

__all__ = ["LOCAL_NAMES", "LOCAL_SUFFIXES", "host_address", "refused_host"]

LOCAL_NAMES = LOOPBACK_NAMES
LOCAL_SUFFIXES = (".localhost", ".local", ".internal")


def refused_host(host: str) -> bool:
    """True for loopback, private, link-local, unspecified or otherwise non-global hosts.

    DNS names are not resolved here (no blocking lookups at start-up): only local names
    (`localhost`, `*.local`, `*.internal`) are refused by name.
    """
    if is_loopback_name(host) or canonical_name(host).endswith(LOCAL_SUFFIXES):
        return True
    address = host_address(host)
    if address is None:
        return False
    embedded = embedded_ipv4(address)
    return not address.is_global or (embedded is not None and not embedded.is_global)
