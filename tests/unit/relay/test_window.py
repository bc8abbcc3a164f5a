"""The claim window: a pure function of the worker's pace, bounded both ways."""

from __future__ import annotations

from relay.window import CEILING, PERIOD, PREFETCH, ClaimWindow


def _paced(window: ClaimWindow, per_second: float, seconds: float, *, start: float) -> float:
    """Feed answers at `per_second` for `seconds` while holding work; the time after."""
    now = start
    step = PERIOD / 5
    while now < start + seconds:
        now += step
        window.wanted(window.size // 2 + 1, now)  # holding something, not claiming
        window.answered(round(per_second * step), now)
    return now


def test_the_window_starts_at_four_times_the_concurrency() -> None:
    """Before any answer the window is the fixed one it replaced: PREFETCH × concurrency."""
    window = ClaimWindow(16, 5.0, now=0.0)
    assert PREFETCH == 4 and window.size == 64


def test_nothing_is_claimed_until_the_window_is_half_empty_then_the_rest() -> None:
    """Holding more than half the window claims nothing; at half or less, what fills it."""
    window = ClaimWindow(16, 5.0, now=0.0)
    assert window.wanted(33, 0.0) == 0
    assert window.wanted(32, 0.0) == 32
    assert window.wanted(0, 0.0) == 64


def test_fast_answers_grow_the_window_to_the_ceiling_and_no_further() -> None:
    """At 10,000 answers a second the window reaches the ceiling of 1,024 claimed."""
    window = ClaimWindow(16, 5.0, now=0.0)
    _paced(window, 10_000, 5.0, start=0.0)
    assert window.size == CEILING == 1024
    assert window.wanted(0, 10.0) == CEILING


def test_the_window_holds_a_quarter_of_the_claims_slack_at_the_pace() -> None:
    """At 400 answers a second and 5 s of slack, the window is 400 × 1.25 = 500."""
    window = ClaimWindow(16, 5.0, now=0.0)
    _paced(window, 400, 5.0, start=0.0)
    assert 480 <= window.size <= 520


def test_slow_answers_shrink_the_window_to_the_concurrency() -> None:
    """After a fast spell, 2 answers a second shrink the window to the concurrency, not below."""
    window = ClaimWindow(16, 5.0, now=0.0)
    now = _paced(window, 10_000, 2.0, start=0.0)
    _paced(window, 2, 5.0, start=now)
    assert window.size == 16


def test_answers_that_stop_shrink_the_window_without_a_new_answer() -> None:
    """A destination that stops answering (attempts hang) shrinks the window to the
    concurrency within the claim's slack (5 s), though no answer comes."""
    window = ClaimWindow(16, 5.0, now=0.0)
    now = _paced(window, 10_000, 2.0, start=0.0)
    for tick in range(1, 17):
        window.wanted(16, now + tick * PERIOD)  # sixteen in flight, none answering
    assert window.size == 16


def test_idle_time_is_not_taken_for_a_slow_pace() -> None:
    """An hour idle, then a restart and the same pace as before (400 a second): the window
    stays at 500, as if the hour had not been."""
    window = ClaimWindow(16, 5.0, now=0.0)
    now = _paced(window, 400, 5.0, start=0.0)
    window.restart(now + 3600)
    window.answered(100, now + 3600 + PERIOD)
    assert 480 <= window.size <= 520


def test_a_concurrency_above_the_ceiling_is_its_own_floor_and_ceiling() -> None:
    """With 2,000 attempts in flight allowed, the window is never below 2,000."""
    window = ClaimWindow(2000, 5.0, now=0.0)
    _paced(window, 1, 5.0, start=0.0)
    assert window.size == window.floor == window.ceiling == 2000
