"""`/readyz`'s answer, checked at most once a second per process (docs/rules.md: Robustness
rules, "Readiness is cheap").

The check commits a small write; an unauthenticated caller polling `/readyz` in a loop must
not turn that into a write per request. A database that stops answering still shows within
about a second, when the cached answer runs out.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ledger.db import Readiness

# Seconds an answer is reused.
READY_TTL = 1.0


class CachedReadiness:
    """The last answer of `check`, reused for `ttl` seconds; concurrent callers after it runs
    out wait for one new check rather than each making their own."""

    def __init__(
        self,
        check: Callable[[], Readiness],
        *,
        ttl: float = READY_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._check = check
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._last: tuple[float, Readiness] | None = None

    def fresh(self) -> Readiness | None:
        """The cached answer while it is younger than `ttl`, else None."""
        last = self._last
        if last is not None and self._clock() - last[0] < self._ttl:
            return last[1]
        return None

    def get(self) -> Readiness:
        """The cached answer, or a new check's (blocking: call it from a worker thread)."""
        with self._lock:
            cached = self.fresh()
            if cached is not None:
                return cached
            started = self._clock()
            answer = self._check()
            self._last = (started, answer)
            return answer
