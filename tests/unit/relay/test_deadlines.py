"""relay.deadlines: one timer cancels the attempts that outlive the transport's timeout."""

from __future__ import annotations

import asyncio

from relay.deadlines import Deadlines, Watch


async def _attempt(deadlines: Deadlines, seconds: float) -> tuple[str, Watch]:
    watch = deadlines.start()
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        if not watch.expired:
            raise
        asyncio.current_task().uncancel()  # type: ignore[union-attr]
        return "expired", watch
    finally:
        watch.done = True
    return "answered", watch


def test_only_the_attempts_that_outlive_the_timeout_are_cancelled() -> None:
    """Of attempts started together, the quick ones answer and the slow ones expire."""

    async def main() -> list[str]:
        deadlines = Deadlines(0.2)
        runs = [_attempt(deadlines, seconds) for seconds in (0.01, 5, 0.05, 5, 0.1)]
        return [outcome for outcome, _watch in await asyncio.gather(*runs)]

    assert asyncio.run(main()) == ["answered", "expired", "answered", "expired", "answered"]


def test_attempts_started_later_get_their_own_full_timeout() -> None:
    """An attempt started after others expired is cancelled at its own deadline, not theirs."""

    async def main() -> tuple[float, str]:
        deadlines = Deadlines(0.2)
        first = asyncio.create_task(_attempt(deadlines, 5))
        await asyncio.sleep(0.15)
        loop = asyncio.get_running_loop()
        started = loop.time()
        outcome, _watch = await _attempt(deadlines, 5)
        assert (await first)[0] == "expired"
        return loop.time() - started, outcome

    elapsed, outcome = asyncio.run(main())
    assert outcome == "expired"
    assert elapsed >= 0.2


def test_a_stop_from_outside_is_not_taken_for_a_deadline() -> None:
    """A cancellation that is not the deadline's goes on, and the watch is not marked expired."""

    async def main() -> Watch:
        deadlines = Deadlines(5)
        watches: list[Watch] = []

        async def attempt() -> None:
            watches.append(deadlines.start())
            try:
                await asyncio.sleep(5)
            finally:
                watches[0].done = True

        task = asyncio.create_task(attempt())
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("the stop was swallowed")
        deadlines.close()
        return watches[0]

    watch = asyncio.run(main())
    assert watch.done and not watch.expired


def test_finished_attempts_do_not_pile_up_in_the_queue() -> None:
    """Thousands of quick attempts leave only the ones still running under watch."""

    async def main() -> int:
        deadlines = Deadlines(30)
        for _ in range(2000):
            await _attempt(deadlines, 0)
        size = len(deadlines._watched)
        deadlines.close()
        return size

    assert asyncio.run(main()) <= 1
