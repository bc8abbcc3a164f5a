"""The readiness cache: one check per second of the clock, whatever the number of callers."""

from __future__ import annotations

from ledger.db import Readiness
from receiver.readiness import CachedReadiness


def test_an_answer_is_reused_for_a_second_then_checked_again() -> None:
    """Within `ttl` every caller gets the first answer; after it, a new check runs and its
    (changed) answer is what callers see."""
    now = [100.0]
    answers: list[Readiness] = ["ok", "unavailable"]
    calls: list[float] = []

    def check() -> Readiness:
        calls.append(now[0])
        return answers[len(calls) - 1]

    cache = CachedReadiness(check, ttl=1.0, clock=lambda: now[0])
    assert cache.fresh() is None
    first = [cache.get() for _ in range(50)]
    now[0] = 100.9
    still = cache.fresh()
    now[0] = 101.0
    assert cache.fresh() is None
    later = cache.get()
    assert (first, still, later, calls) == (["ok"] * 50, "ok", "unavailable", [100.0, 101.0])
