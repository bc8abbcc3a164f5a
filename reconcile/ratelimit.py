"""A token-bucket rate cap for provider lookups (PAYRECON_PROVIDER_MAX_RPS; 0 = off)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol


class Clock(Protocol):
    """A monotonic clock in seconds (the test seam)."""

    def __call__(self) -> float: ...


class TokenBucket:
    """Up to `rate` acquisitions per second on average, bursts of at most `burst`.

    Acquisitions are serialised by a lock so that waiting callers leave in order and
    the long-run rate never exceeds `rate`, however many tasks wait at once.

    Written here rather than taken from aiolimiter: that one reads the event loop's clock
    and sleeps on it, where this bucket takes its clock and sleep as arguments, so the
    cap is tested on a fake clock in no time.
    """

    def __init__(
        self,
        rate: float,
        *,
        burst: float | None = None,
        clock: Clock = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if rate < 0:
            raise ValueError("rate must be >= 0")
        self.rate = rate
        # A burst of one second's worth (at least one token) keeps the cap meaningful.
        self.burst = burst if burst is not None else max(1.0, rate)
        self._clock = clock
        self._sleep = sleep
        self._tokens = self.burst
        self._stamp = clock()
        self._lock = asyncio.Lock()

    @property
    def enabled(self) -> bool:
        """False when the cap is off (rate 0)."""
        return self.rate > 0

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._stamp)
        self._stamp = now
        self._tokens = min(self.burst, self._tokens + elapsed * self.rate)

    async def acquire(self) -> None:
        """Wait until one request may go out."""
        if not self.enabled:
            return
        async with self._lock:
            self._refill()
            if self._tokens < 1.0:
                await self._sleep((1.0 - self._tokens) / self.rate)
                self._refill()
                # We slept exactly long enough; float rounding must not make us spin.
                self._tokens = max(self._tokens, 1.0)
            self._tokens -= 1.0
