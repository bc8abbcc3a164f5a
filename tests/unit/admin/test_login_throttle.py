"""The login throttle: failures per address in a sliding window."""

from __future__ import annotations

from admin.login import safe_next
from admin.throttle import LoginThrottle


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_address_waits_once_past_the_limit_until_its_oldest_failure_ages_out() -> None:
    """Three failures in the window block the fourth try, for the rest of the window only."""
    clock = Clock()
    throttle = LoginThrottle(max_failures=3, window=300, clock=clock)
    for step in range(3):
        assert throttle.retry_after("10.0.0.1") is None
        throttle.failed("10.0.0.1")
        clock.now += 10 if step < 2 else 0
    assert throttle.retry_after("10.0.0.1") == 280
    assert throttle.retry_after("10.0.0.2") is None
    clock.now += 280
    assert throttle.retry_after("10.0.0.1") is None


def test_old_failures_do_not_count() -> None:
    """Failures spread wider than the window never block."""
    clock = Clock()
    throttle = LoginThrottle(max_failures=2, window=60, clock=clock)
    for _ in range(10):
        throttle.failed("10.0.0.1")
        clock.now += 61
    assert throttle.retry_after("10.0.0.1") is None


def test_next_keeps_local_paths_only() -> None:
    """`next` after login is a path on this site, or the console's home."""
    assert safe_next("/console/findings?state=open") == "/console/findings?state=open"
    for hostile in ("//evil.example", "/\\evil", "https://evil.example", "/a\r\nb", None, "x"):
        assert safe_next(hostile) == "/console"
