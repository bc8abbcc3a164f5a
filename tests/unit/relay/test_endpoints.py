"""Endpoint input: which URLs, event types and descriptions an endpoint may have."""

from __future__ import annotations

import pytest

from ledger.events.types import DEFAULT_TYPES, RelayEventType
from relay.endpoints import (
    MAX_URL_LENGTH,
    check_description,
    check_types,
    check_url,
    types_column,
)
from relay.errors import EndpointInputError

GOOD_URLS = [
    "http://10.0.0.7:8080/payrecon",
    "https://orders.example.com/hooks/payrecon?source=payrecon",
    "http://[fd00::7]:9000/events",
    "https://[2001:db8::1]/events",
    "http://orders.internal:1/",
    "http://orders.internal:65535/",
    "https://bücher.example/hook",
]
BAD_URLS = [
    ("", "empty"),
    ("   ", "empty"),
    ("ftp://example.com/", "http:// or https://"),
    ("javascript:alert(1)", "http:// or https://"),
    ("example.com/hook", "http:// or https://"),
    ("http:///path", "no host"),
    ("http://user:pass@example.com/", "credentials"),
    ("http://user@example.com/", "credentials"),
    ("http://example.com/a b", "space or a control character"),
    ("http://example.com/\x00", "space or a control character"),
    ("http://example.com/\r\nX-Injected: 1", "space or a control character"),
    ("http://example.com/a\x85b", "space or a control character"),
    ("http://example.com/\ud800", "space or a control character"),
    ("http://example.com/#part", "fragment"),
    ("http://example.com:0/", "1-65535"),
    ("http://example.com:65536/", "not a URL"),
    ("http://example.com:http/", "not a URL"),
    ("http://[::1/", "not a URL"),
    ("http://0.0.0.0/", "unspecified address"),
    ("http://[::]/", "unspecified address"),
    ("http://224.0.0.1/", "multicast address"),
    ("http://a..b/", "not a valid host name"),
    ("http://" + "a" * 64 + ".example/", "not a valid host name"),
    ("https://example.com/" + "x" * MAX_URL_LENGTH, "longer than"),
]


@pytest.mark.parametrize("url", GOOD_URLS)
def test_http_and_https_urls_with_a_host_are_accepted(url: str) -> None:
    """Plain http on a private network, IPv6 literals, ports at both ends of the range pass."""
    assert check_url(url, allow=()) == url


def test_surrounding_whitespace_is_stripped() -> None:
    """A URL pasted with a trailing newline is stored without it."""
    assert check_url("  http://10.0.0.7/hook\n", allow=()) == "http://10.0.0.7/hook"


@pytest.mark.parametrize(("url", "reason"), BAD_URLS)
def test_unacceptable_urls_are_refused_saying_why(url: str, reason: str) -> None:
    """Each bad URL raises EndpointInputError about the URL, with a reason a person can act on."""
    with pytest.raises(EndpointInputError) as caught:
        check_url(url, allow=())
    assert reason in str(caught.value)
    assert caught.value.field == "url"


def test_no_types_means_every_type_but_webhook_evidence() -> None:
    """A missing or blank list gives the default set, which leaves out transfer.reported."""
    assert check_types(None) == DEFAULT_TYPES == check_types("  ")
    assert RelayEventType.TRANSFER_REPORTED not in DEFAULT_TYPES
    assert len(DEFAULT_TYPES) == len(RelayEventType) - 1


def test_listed_types_are_read_with_spaces_and_duplicates() -> None:
    """`a, b,a` is the set {a, b}."""
    assert check_types("transfer.reported, finding.opened,transfer.reported") == {
        RelayEventType.TRANSFER_REPORTED,
        RelayEventType.FINDING_OPENED,
    }


@pytest.mark.parametrize("value", ["transfer.paid", "TRANSFER.CONFIRMED", "transfer.confirmed,x"])
def test_an_unknown_type_is_refused_naming_it(value: str) -> None:
    """An unknown name is an EndpointInputError about the events that lists the known ones."""
    with pytest.raises(EndpointInputError) as caught:
        check_types(value)
    assert caught.value.field == "events"
    assert "unknown event type" in str(caught.value) and "finding.opened" in str(caught.value)


def test_a_list_of_nothing_but_commas_is_refused() -> None:
    """`,` names no type: refused rather than an endpoint that takes nothing."""
    with pytest.raises(EndpointInputError, match="names no type"):
        check_types(" , ,")


def test_the_default_set_is_stored_as_null() -> None:
    """The ledger stores None for the default set and a sorted comma list otherwise."""
    assert types_column(DEFAULT_TYPES) is None
    assert (
        types_column(
            frozenset({RelayEventType.FINDING_OPENED, RelayEventType.COLLECTION_CONFIRMED})
        )
        == "collection.confirmed,finding.opened"
    )


def test_descriptions_are_stripped_and_bounded() -> None:
    """Blank is None; a NUL, a lone surrogate or 501 characters are refused."""
    assert check_description("  order system ") == "order system"
    assert check_description("   ") is None and check_description(None) is None
    for bad in ("a\x00b", "a\ud800", "x" * 501):
        with pytest.raises(EndpointInputError) as caught:
            check_description(bad)
        assert caught.value.field == "description"
