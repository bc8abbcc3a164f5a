"""Attempt deadlines kept by one timer per transport instead of one per attempt.

Every attempt through a transport has the same timeout, so deadlines come in the order the
attempts start: a queue holds them, and a single timer, set for the oldest attempt that may
still be running, cancels each attempt that outlived its deadline (marked expired, so the
caller tells its own timeout from a stop of the worker). `asyncio.timeout` made a timer
handle and its state machine per attempt: about 10 µs, as much as a whole pipelined XADD
(bench/RESULTS.md section 15). An expired attempt is cancelled at its deadline or a little
after, never before.
"""

from __future__ import annotations

import asyncio
import collections


class Watch:
    """One attempt under watch: its task, its deadline (loop time), and how it ended."""

    __slots__ = ("deadline", "done", "expired", "task")

    def __init__(self, task: asyncio.Task[object] | None, deadline: float) -> None:
        self.task = task
        self.deadline = deadline
        self.done = False  # the attempt is over: nothing to cancel
        self.expired = False  # cancelled for its deadline


class Deadlines:
    """Cancels attempts that run past `timeout` seconds; one timer for all of them."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._watched: collections.deque[Watch] = collections.deque()
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> Watch:
        """Watch the current task from now; set `done` on the Watch when its attempt ends."""
        loop = asyncio.get_running_loop()
        watched = self._watched
        while watched and watched[0].done:
            watched.popleft()
        watch = Watch(asyncio.current_task(), loop.time() + self.timeout)
        watched.append(watch)
        if self._timer is None:
            self._timer = loop.call_at(watch.deadline, self._expire, loop)
        return watch

    def _expire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = loop.time()
        watched = self._watched
        while watched:
            head = watched[0]
            if not head.done and head.deadline > now:
                break
            watched.popleft()
            if not head.done and head.task is not None:
                head.expired = True
                head.task.cancel()
        if watched:
            self._timer = loop.call_at(watched[0].deadline, self._expire, loop)

    def close(self) -> None:
        """Stop the timer (the transport closes)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._watched.clear()
