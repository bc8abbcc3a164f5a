"""Failed-login throttling per remote address, in memory (one process's count)."""

from __future__ import annotations

import collections
import math
from collections.abc import Callable

# Addresses remembered at most: a flood from many addresses cannot grow memory without bound
# (the oldest address is forgotten first).
MAX_ADDRESSES = 10_000


class LoginThrottle:
    """Counts failed logins per address in a sliding window; past `max_failures` within
    `window` seconds the address must wait until its oldest failure leaves the window.

    Counts live in this process only: with N receivers behind a balancer an address gets up to
    N × max_failures tries per window, which still makes guessing a 32-byte token hopeless.
    """

    def __init__(self, *, max_failures: int, window: float, clock: Callable[[], float]) -> None:
        self.max_failures = max_failures
        self.window = window
        self._clock = clock
        self._failures: collections.OrderedDict[str, collections.deque[float]] = (
            collections.OrderedDict()
        )

    def _recent(self, address: str, now: float) -> collections.deque[float]:
        times = self._failures.get(address)
        if times is None:
            return collections.deque()
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._failures[address]
        return times

    def retry_after(self, address: str) -> int | None:
        """Seconds `address` must wait before trying again, or None when it may try now."""
        now = self._clock()
        times = self._recent(address, now)
        if len(times) < self.max_failures:
            return None
        return max(1, math.ceil(times[0] + self.window - now))

    def failed(self, address: str) -> None:
        """Count one failed login from `address`."""
        now = self._clock()
        times = self._recent(address, now)
        if address not in self._failures:
            self._failures[address] = times
        self._failures.move_to_end(address)
        times.append(now)
        while len(times) > self.max_failures:
            times.popleft()
        while len(self._failures) > MAX_ADDRESSES:
            self._failures.popitem(last=False)
