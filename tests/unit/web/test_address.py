"""The client's address: X-Forwarded-For believed only from trusted proxies, all lines joined."""

from __future__ import annotations

from web.address import client_address, forwarded_for

PROXY = "10.0.0.5"


def test_forwarded_for_is_ignored_from_an_untrusted_peer() -> None:
    """A peer that is not a trusted proxy cannot claim another address."""
    assert client_address("203.0.113.9", "198.51.100.1", frozenset()) == "203.0.113.9"


def test_forwarded_for_is_believed_from_a_trusted_proxy() -> None:
    """Behind a trusted proxy the rightmost untrusted hop is the sender."""
    got = client_address(PROXY, "1.1.1.1, 198.51.100.7", frozenset({PROXY}))
    assert got == "198.51.100.7"


def test_a_garbled_hop_stops_the_walk() -> None:
    """A hop that is not an address is not believed, nor anything left of it."""
    assert client_address(PROXY, "198.51.100.7, junk", frozenset({PROXY})) == PROXY


def test_every_forwarded_for_line_is_joined_in_order() -> None:
    """Two X-Forwarded-For lines read as one list, first line first; other headers ignored."""
    raw = [
        (b"x-forwarded-for", b"198.51.100.7"),
        (b"host", b"example"),
        (b"x-forwarded-for", b"203.0.113.9"),
    ]
    assert forwarded_for(raw) == "198.51.100.7,203.0.113.9"
    assert forwarded_for([(b"host", b"example")]) is None


def test_a_line_appended_by_a_trusted_proxy_names_the_client() -> None:
    """A client's forged first line does not win over the line its proxy appended."""
    raw = [(b"x-forwarded-for", b"1.2.3.4"), (b"x-forwarded-for", b"198.51.100.7")]
    assert client_address(PROXY, forwarded_for(raw), frozenset({PROXY})) == "198.51.100.7"
