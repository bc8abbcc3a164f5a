"""Retries: GETs on transient failures with backoff and Retry-After; POSTs never."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from provider import errors
from provider.retry import RetryPolicy, parse_retry_after
from tests.unit.provider.support import INITIATION, TXN, VA, Script, failed, ok, sync_client


def test_get_retries_a_5xx_then_succeeds() -> None:
    """A 503 then a 200 gives the result after one backoff sleep."""
    script = Script(failed("Service unavailable", 503), ok(TXN))
    client, sleeps = sync_client(script)
    assert client.get_transaction("TRF_1").reference == "TRF_1"
    assert len(script.requests) == 2
    assert len(sleeps) == 1


def test_get_gives_up_after_max_retries_with_growing_delays() -> None:
    """max_retries=3 means four attempts, and each wait is longer than the last."""
    script = Script(failed("Service unavailable", 502))
    client, sleeps = sync_client(script, max_retries=3, backoff=0.5)
    with pytest.raises(errors.ProviderUnavailableError) as caught:
        client.get_transaction("TRF_1")
    assert caught.value.status_code == 502
    assert len(script.requests) == 4
    assert sleeps == sorted(sleeps) and len(set(sleeps)) == 3


def test_max_retries_zero_sends_once() -> None:
    """With retries off a transient failure surfaces at once."""
    script = Script(failed("Service unavailable", 503))
    client, sleeps = sync_client(script, max_retries=0)
    with pytest.raises(errors.ProviderUnavailableError):
        client.banks()
    assert len(script.requests) == 1
    assert sleeps == []


def test_transfer_initiation_is_never_retried_on_5xx() -> None:
    """A POST answered 503 is sent once: its outcome is unknown, not failed."""
    script = Script(failed("Service unavailable", 503), ok(INITIATION))
    client, sleeps = sync_client(script)
    with pytest.raises(errors.ProviderUnavailableError):
        client.initiate_transfer(
            amount=100_000, bank_code="058", account_number="0000000018", reference="m-1"
        )
    assert len(script.requests) == 1
    assert sleeps == []


def test_transfer_initiation_timeout_is_not_retried() -> None:
    """An initiation whose answer was lost surfaces as ProviderTimeoutError after one send."""
    script = Script(httpx.ReadTimeout("read timed out"), ok(INITIATION))
    client, _ = sync_client(script)
    with pytest.raises(errors.ProviderTimeoutError) as caught:
        client.initiate_transfer(
            amount=100_000, bank_code="058", account_number="0000000018", reference="m-1"
        )
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.create_virtual_account(type="static", customer={}),
        lambda c: c.deactivate_virtual_account("va_1"),
        lambda c: c.create_collection(reference="c-1", amount=5000),
    ],
)
def test_other_posts_are_not_retried(call: object) -> None:
    """No POST is retried blindly."""
    script = Script(failed("Service unavailable", 500), ok(VA))
    client, _ = sync_client(script)
    with pytest.raises(errors.ProviderUnavailableError):
        call(client)  # type: ignore[operator]
    assert len(script.requests) == 1


def test_get_timeout_is_retried_then_mapped() -> None:
    """A GET that keeps timing out ends as ProviderTimeoutError after all attempts."""
    script = Script(httpx.ReadTimeout("read timed out"))
    client, sleeps = sync_client(script, max_retries=2)
    with pytest.raises(errors.ProviderTimeoutError):
        client.banks()
    assert len(script.requests) == 3
    assert len(sleeps) == 2


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ConnectError("connection refused"),
        httpx.ReadError("connection reset by peer"),
        httpx.RemoteProtocolError("server disconnected"),
    ],
)
def test_connection_failures_are_unavailable(failure: Exception) -> None:
    """Refused, reset or broken connections are ProviderUnavailableError."""
    client, _ = sync_client(Script(failure), max_retries=1)
    with pytest.raises(errors.ProviderUnavailableError) as caught:
        client.banks()
    assert caught.value.__cause__ is failure


def test_connect_timeout_is_timeout() -> None:
    """Any httpx timeout is ProviderTimeoutError."""
    client, _ = sync_client(Script(httpx.ConnectTimeout("slow")), max_retries=0)
    with pytest.raises(errors.ProviderTimeoutError):
        client.banks()


def test_429_retry_after_seconds_is_honoured() -> None:
    """A 429 asking for 7 seconds is waited out before the retry."""
    script = Script(failed("Too many requests", 429, **{"Retry-After": "7"}), ok(TXN))
    client, sleeps = sync_client(script)
    client.get_transaction("TRF_1")
    assert sleeps == [7.0]
    assert len(script.requests) == 2


def test_429_retry_after_beyond_the_cap_is_surfaced() -> None:
    """A 429 asking for longer than the cap is raised, carrying the wait, not slept."""
    script = Script(failed("Too many requests", 429, **{"Retry-After": "600"}), ok(TXN))
    client, sleeps = sync_client(script)
    with pytest.raises(errors.RateLimitedError) as caught:
        client.get_transaction("TRF_1")
    assert caught.value.retry_after == 600.0
    assert sleeps == []
    assert len(script.requests) == 1


def test_429_without_retry_after_backs_off() -> None:
    """A 429 without the header is retried with ordinary backoff and says retry_after None."""
    script = Script(failed("Too many requests", 429))
    client, sleeps = sync_client(script, max_retries=1)
    with pytest.raises(errors.RateLimitedError) as caught:
        client.get_transaction("TRF_1")
    assert caught.value.retry_after is None
    assert len(sleeps) == 1


def test_policy_delay_is_capped_and_jittered() -> None:
    """Delays grow by doubling, stay within [base/2, base] and never pass max_delay."""
    policy = RetryPolicy(max_retries=10, backoff=1.0, max_delay=8.0)
    error = errors.ProviderUnavailableError("x")
    low = [policy.delay(n, error, lambda: 0.0) for n in range(6)]
    high = [policy.delay(n, error, lambda: 1.0) for n in range(6)]
    assert low == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert high == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert policy.delay(10, error, lambda: 0.5) is None


def test_parse_retry_after_seconds() -> None:
    """Delta-seconds are read as seconds; negatives become zero; junk is None."""
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("nan") is None


def test_parse_retry_after_http_date() -> None:
    """An HTTP-date is read as the seconds from now until then."""
    now = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("Mon, 01 Jan 2024 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Mon, 01 Jan 2024 11:00:00 GMT", now=now) == 0.0


def test_policy_gives_up_after_its_retries_or_on_a_long_retry_after() -> None:
    """No retry past max_retries, nor when a 429 asks for longer than max_retry_after."""
    policy = RetryPolicy(max_retries=2, max_retry_after=60.0)
    busy = errors.ProviderUnavailableError("x")
    assert not policy.gives_up(1, busy) and policy.gives_up(2, busy)
    asked_a_minute = errors.RateLimitedError("slow down", retry_after=60.0)
    asked_longer = errors.RateLimitedError("slow down", retry_after=61.0)
    assert not policy.gives_up(0, asked_a_minute) and policy.gives_up(0, asked_longer)
    assert policy.delay(0, asked_longer, lambda: 0.5) is None
