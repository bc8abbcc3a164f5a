"""A small in-process cache with a time to live, for account enquiry results."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

import cachetools

V = TypeVar("V")
MAX_ENTRIES = 10_000


class TTLCache(Generic[V]):
    """Values kept for `ttl` seconds of `clock`; thread-safe; `ttl <= 0` keeps nothing.

    Spec, Limits 6: enquiries may be rate-limited and repeated enquiries for the
    same account in quick succession are to be avoided, so a payout's enquiry and
    a retry of it minutes later share one answer.
    """

    def __init__(self, ttl: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl
        # Bounded memory for a long-running reconciler: expired entries go first, then the
        # least recently used. cachetools' caches are not thread-safe, hence the lock.
        self._entries: cachetools.TTLCache[Hashable, V] = cachetools.TTLCache(
            MAX_ENTRIES, max(ttl, 0.0), timer=clock
        )
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value stored under `key` if it has not expired."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: Hashable, value: V) -> None:
        """Remember `value` under `key` for `ttl` seconds."""
        if self.ttl <= 0:
            return
        with self._lock:
            self._entries[key] = value

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()
