"""The claim window: how many claimed deliveries a worker holds, sized by its pace.

A worker holds claimed deliveries in flight and waiting for a slot; it claims again when they
are down to half its window, and takes the rest. The window starts at PREFETCH × the
concurrency (the fixed window it replaced, bench/RESULTS.md section 5) and then follows the
pace: every PERIOD seconds of work (idle time is left out), it becomes what the worker
answered per second (smoothed) times SHARE of a claim's slack — the seconds a claim outlasts
an attempt's timeout — within [concurrency, CEILING].

So a fast destination (a JetStream ack, an XADD: thousands a second) grows it to the ceiling,
one claim serves hundreds of attempts and the next is taken while they are sent; a slow or
failing one shrinks it to the concurrency, so the worker never holds many claims that would
end before a slot frees for them (a waiting claim must start its attempt within the slack).
Pure: the caller gives the clock (`time.monotonic()`).
"""

from __future__ import annotations

# The window to start with, as a multiple of the concurrency.
PREFETCH = 4
# The most claimed deliveries a worker holds to send (waiting or in flight), whatever its pace
# (and at least its concurrency); answers waiting to be recorded add at most as many again
# (relay.worker).
CEILING = 1024
# Seconds between two sizings.
PERIOD = 0.25
# The share of a claim's slack the window may hold at the current pace: a quarter leaves room
# for the pace to halve, and for the claim's own round trip.
SHARE = 0.25


class ClaimWindow:
    """The claimed deliveries a worker aims to hold, sized by how fast its attempts answer."""

    __slots__ = ("_answered", "_horizon", "_pace", "_since", "ceiling", "floor", "size")

    def __init__(self, concurrency: int, slack: float, *, now: float) -> None:
        self.floor = max(1, concurrency)
        self.ceiling = max(CEILING, self.floor)
        self.size = min(PREFETCH * self.floor, self.ceiling)
        self._horizon = slack * SHARE  # seconds of sending the window may hold
        self._pace: float | None = None  # answers per second, smoothed
        self._since = now  # when the current measure began
        self._answered = 0

    def wanted(self, held: int, now: float) -> int:
        """How many to claim while holding `held`: none above half the window, else the rest."""
        if now - self._since >= PERIOD:
            self._resize(now)
        return self.size - held if held <= self.size // 2 else 0

    def restart(self, now: float) -> None:
        """Measure afresh from `now` (the worker was idle: time without work says nothing
        about the pace)."""
        self._since, self._answered = now, 0

    def answered(self, count: int, now: float) -> None:
        """Count `count` attempts answered at `now`, and size the window once a PERIOD is over."""
        self._answered += count
        if now - self._since >= PERIOD:
            self._resize(now)

    def _resize(self, now: float) -> None:
        sample = self._answered / (now - self._since)
        # Halfway to each new measure: one period's burst of answers (attempts of a second
        # each, all answering in the same quarter second) does not swing the window.
        self._pace = sample if self._pace is None else (self._pace + sample) / 2
        self.size = max(self.floor, min(self.ceiling, int(self._pace * self._horizon)))
        self._since, self._answered = now, 0
