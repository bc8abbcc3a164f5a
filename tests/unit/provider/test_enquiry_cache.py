"""The enquiry cache: spec, Limits 6 (avoid repeated enquiries in quick succession)."""

from __future__ import annotations

import pytest

from provider.cache import TTLCache
from provider.errors import EnquiryFailedError
from tests.unit.provider.support import ENQUIRY, Script, failed, ok, sync_client


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_second_enquiry_sends_nothing() -> None:
    """The same account at the same bank is answered from the cache."""
    script = Script(ok(ENQUIRY))
    client, _ = sync_client(script)
    first = client.account_enquiry("0000000018", "058")
    second = client.account_enquiry("0000000018", "058")
    assert second == first
    assert len(script.requests) == 1


def test_cache_is_keyed_by_account_and_bank() -> None:
    """Another bank code is another question (a number is valid at one bank only)."""
    script = Script(ok(ENQUIRY))
    client, _ = sync_client(script)
    client.account_enquiry("0000000018", "058")
    client.account_enquiry("0000000018", "044")
    client.account_enquiry("0000000025", "058")
    assert len(script.requests) == 3


def test_cache_expires_after_ttl() -> None:
    """After enquiry_cache_ttl seconds the provider is asked again."""
    clock = FakeClock()
    script = Script(ok(ENQUIRY))
    client, _ = sync_client(script, enquiry_cache_ttl=60.0, clock=clock)
    client.account_enquiry("0000000018", "058")
    clock.now += 59.0
    client.account_enquiry("0000000018", "058")
    assert len(script.requests) == 1
    clock.now += 1.0
    client.account_enquiry("0000000018", "058")
    assert len(script.requests) == 2


def test_ttl_zero_disables_the_cache() -> None:
    """enquiry_cache_ttl=0 asks every time."""
    script = Script(ok(ENQUIRY))
    client, _ = sync_client(script, enquiry_cache_ttl=0)
    client.account_enquiry("0000000018", "058")
    client.account_enquiry("0000000018", "058")
    assert len(script.requests) == 2


def test_failed_enquiry_is_not_cached() -> None:
    """A failure is not remembered: the next enquiry asks again."""
    script = Script(failed("Account name enquiry failed"), ok(ENQUIRY))
    client, _ = sync_client(script)
    with pytest.raises(EnquiryFailedError):
        client.account_enquiry("0000000018", "058")
    assert client.account_enquiry("0000000018", "058").account_name == "ADA"
    assert len(script.requests) == 2


def test_ttl_cache_bounds_its_size() -> None:
    """A full cache drops expired entries rather than growing without limit."""
    clock = FakeClock()
    cache: TTLCache[int] = TTLCache(10.0, clock)
    for n in range(10_000):
        cache.put(n, n)
    clock.now += 11.0
    cache.put("new", 1)
    assert cache.get("new") == 1
    assert cache.get(0) is None
    assert len(cache._entries) == 1
