"""The token bucket caps lookups per second, measured on a fake clock."""

from __future__ import annotations

import asyncio

from reconcile.ratelimit import TokenBucket


class FakeClock:
    """Time that moves only when someone sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _acquire_times(bucket: TokenBucket, clock: FakeClock, count: int, tasks: int) -> list[float]:
    times: list[float] = []

    async def worker(n: int) -> None:
        for _ in range(n):
            await bucket.acquire()
            times.append(clock.now)

    async def main() -> None:
        per, extra = divmod(count, tasks)
        await asyncio.gather(*(worker(per + (i < extra)) for i in range(tasks)))

    asyncio.run(main())
    return sorted(times)


def test_rate_is_capped_after_the_burst() -> None:
    """100 acquisitions at 10/s with a burst of 10 take 9 s of fake time, none early."""
    clock = FakeClock()
    bucket = TokenBucket(10, burst=10, clock=clock, sleep=clock.sleep)
    times = _acquire_times(bucket, clock, 100, tasks=8)
    assert times[9] == 0.0  # the burst goes at once
    assert abs(times[-1] - 9.0) < 1e-6
    for i, t in enumerate(times[10:], start=10):
        assert t >= (i - 9) / 10 - 1e-9  # never ahead of the cap


def test_zero_rate_means_no_cap() -> None:
    """Rate 0 switches the cap off: nothing ever sleeps."""
    clock = FakeClock()
    bucket = TokenBucket(0, clock=clock, sleep=clock.sleep)
    _acquire_times(bucket, clock, 50, tasks=4)
    assert clock.sleeps == []
    assert not bucket.enabled
