"""A small in-process cache with a time to live, for account enquiry results."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

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
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[Hashable, tuple[float, V]] = {}

    def get(self, key: Hashable) -> V | None:
        """The value stored under `key` if it has not expired."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires, value = entry
            if self._clock() >= expires:
                del self._entries[key]
                return None
            return value

    def put(self, key: Hashable, value: V) -> None:
        """Remember `value` under `key` for `ttl` seconds."""
        if self.ttl <= 0:
            return
        now = self._clock()
        with self._lock:
            if len(self._entries) >= MAX_ENTRIES:
                # Bounded memory for a long-running reconciler: drop what expired, else all.
                live = {k: e for k, e in self._entries.items() if e[0] > now}
                self._entries = live if len(live) < MAX_ENTRIES else {}
            self._entries[key] = (now + self.ttl, value)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()
