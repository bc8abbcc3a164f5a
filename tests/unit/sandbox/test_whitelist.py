"""Whitelist rules: single addresses, descriptions, exact match, immediate effect."""

from __future__ import annotations

import pytest

from sandbox.errors import ConflictError, ForbiddenError, NotFoundError, ValidationError
from sandbox.whitelist import EMPTY_LIST, NOT_ALLOWED, Whitelist


def _whitelist() -> Whitelist:
    return Whitelist(clock=lambda: 1_700_000_000.0)


def test_off_allows_anyone():
    """A disabled whitelist lets every origin through."""
    _whitelist().check("198.51.100.1")


def test_enabled_and_empty_refuses_with_the_empty_message():
    """Enabled with no entries refuses with the 'no IP addresses are configured' body."""
    whitelist = _whitelist()
    whitelist.set_enabled(True)
    with pytest.raises(ForbiddenError) as caught:
        whitelist.check("127.0.0.1")
    assert caught.value.body == {"message": EMPTY_LIST}


def test_exact_match_only():
    """Only the listed address passes; a neighbour is refused with the not-allowed body."""
    whitelist = _whitelist()
    whitelist.add("10.0.0.1", "app server")
    whitelist.set_enabled(True)
    whitelist.check("10.0.0.1")
    with pytest.raises(ForbiddenError) as caught:
        whitelist.check("10.0.0.2")
    assert caught.value.body == {"message": NOT_ALLOWED}


def test_ipv6_is_matched_canonically():
    """An IPv6 entry matches the same address written another way."""
    whitelist = _whitelist()
    whitelist.add("2001:DB8:0::1", "v6 server")
    whitelist.set_enabled(True)
    whitelist.check("2001:db8::1")


@pytest.mark.parametrize(
    "ip", ["10.0.0.0/8", "10.0.0.*", "*", "", " 10.0.0.1", "10.0.0.1,10.0.0.2"]
)
def test_only_single_addresses_are_accepted(ip):
    """CIDR ranges, wildcards, lists and padded text are rejected."""
    with pytest.raises(ValidationError):
        _whitelist().add(ip, "anything")


def test_description_needs_three_characters_and_is_editable():
    """A description under three characters is rejected; it can be replaced later."""
    whitelist = _whitelist()
    with pytest.raises(ValidationError):
        whitelist.add("10.0.0.1", "ab ")
    entry = whitelist.add("10.0.0.1", "abc")
    assert whitelist.describe(entry.id, "renamed").description == "renamed"
    assert whitelist.entries()[0].ip == "10.0.0.1"


def test_duplicate_address_conflicts_and_delete_is_immediate():
    """The same address twice conflicts; removing it refuses the very next check."""
    whitelist = _whitelist()
    entry = whitelist.add("10.0.0.1", "server")
    with pytest.raises(ConflictError):
        whitelist.add("10.0.0.1", "again")
    whitelist.add("10.0.0.9", "other")
    whitelist.set_enabled(True)
    whitelist.remove(entry.id)
    with pytest.raises(ForbiddenError):
        whitelist.check("10.0.0.1")
    with pytest.raises(NotFoundError):
        whitelist.remove(entry.id)


def test_unparseable_origin_is_refused():
    """An origin that is not an address at all is not allowed."""
    whitelist = _whitelist()
    whitelist.add("10.0.0.1", "server")
    whitelist.set_enabled(True)
    with pytest.raises(ForbiddenError):
        whitelist.check(None)
