"""The one background task that completes pending transfers when they are due."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sandbox.models import WebhookEvent
from sandbox.state import World
from sandbox.webhooks import WebhookDispatcher

logger = logging.getLogger(__name__)


class Runtime:
    """The background side of one app: completion schedule and webhook delivery.

    Built unstarted by `create_app`; the app's lifespan starts and stops it.
    Events submitted before start are kept and sent on start.
    """

    def __init__(self, world: World) -> None:
        self.world = world
        self._dispatcher: WebhookDispatcher | None = None
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._backlog: list[WebhookEvent] = []

    def start(self, dispatcher: WebhookDispatcher) -> None:
        """Start the completion loop (call from within the running event loop)."""
        self._dispatcher = dispatcher
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._loop())
        backlog, self._backlog = self._backlog, []
        for event in backlog:
            dispatcher.submit(event)

    async def stop(self) -> None:
        """Stop the loop and every delivery in flight."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._dispatcher is not None:
            await self._dispatcher.aclose()
            self._dispatcher = None

    def wake(self) -> None:
        """Tell the loop the schedule changed (a transfer was initiated)."""
        if self._wake is not None:
            self._wake.set()

    def submit(self, event: WebhookEvent) -> None:
        """Send a webhook event (or keep it until started)."""
        if self._dispatcher is None:
            self._backlog.append(event)
        else:
            self._dispatcher.submit(event)

    async def _loop(self) -> None:
        assert self._wake is not None
        while True:
            try:
                for event in self.world.complete_due(self.world.clock()):
                    self.submit(event)
            except Exception:  # keep completing the others; a bug is logged, not fatal
                logger.exception("completing due transfers failed")
            # No await between reading the schedule and clearing: nothing can slip in.
            self._wake.clear()
            due = self.world.next_due()
            timeout = None if due is None else max(0.0, due - self.world.clock())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
