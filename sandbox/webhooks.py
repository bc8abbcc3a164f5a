"""Webhook delivery: concurrent, retried on a schedule, every attempt recorded.

Faults shape a delivery here: dropped (never sent, logged as dropped),
delayed, duplicated (a second copy after the first), reordered (held back
until the next delivery has made its first attempt, or `reorder_max_hold`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import httpx

from sandbox.models import WebhookAttempt, WebhookEvent
from sandbox.signing import signing_headers
from sandbox.state import World

logger = logging.getLogger(__name__)

NO_URL = "no webhook URL configured"


def message_id(event: WebhookEvent) -> str:
    """A stable id per logical event: retries and duplicate copies share it."""
    digest = hashlib.sha256(f"{event.event.value}:{event.reference}".encode()).hexdigest()
    return f"msg_{digest[:24]}"


class WebhookDispatcher:
    """Sends webhook events for one world over one shared httpx client."""

    def __init__(self, world: World, client: httpx.AsyncClient) -> None:
        self._world = world
        self._client = client
        self._config = world.config
        self._slots = asyncio.Semaphore(self._config.webhook_concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._held: list[WebhookEvent] = []
        self._hold_timer: asyncio.TimerHandle | None = None

    def submit(self, event: WebhookEvent) -> None:
        """Start delivering an event (from the event loop's thread)."""
        if "webhook_drop" in event.faults:
            self._record(event, attempt=0, copy=1, url=None, status=None, error="dropped")
            return
        if "webhook_reorder" in event.faults:
            self._held.append(event)
            if self._hold_timer is None:
                loop = asyncio.get_running_loop()
                self._hold_timer = loop.call_later(self._config.reorder_max_hold, self._release)
            return
        held, self._held = self._held, []
        if held and self._hold_timer is not None:
            self._hold_timer.cancel()
            self._hold_timer = None

        def release_held() -> None:
            for item in held:
                self._spawn(self._run(item))

        self._spawn(self._run(event, after_first_attempt=release_held if held else None))

    async def aclose(self) -> None:
        """Stop every delivery in flight (shutdown)."""
        if self._hold_timer is not None:
            self._hold_timer.cancel()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _release(self) -> None:
        self._hold_timer = None
        held, self._held = self._held, []
        for item in held:
            self._spawn(self._run(item))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(
        self, event: WebhookEvent, after_first_attempt: Callable[[], None] | None = None
    ) -> None:
        try:
            if event.delay > 0:
                await asyncio.sleep(event.delay)
            await self._deliver(event, copy=1, after_first_attempt=after_first_attempt)
            if "webhook_duplicate" in event.faults:
                await self._deliver(event, copy=2)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug here must not kill the loop; it is logged instead
            logger.exception("webhook delivery crashed for %s", event.reference)

    async def _deliver(
        self,
        event: WebhookEvent,
        *,
        copy: int,
        after_first_attempt: Callable[[], None] | None = None,
    ) -> None:
        body = json.dumps(event.body(), separators=(",", ":")).encode()
        delays = self._config.webhook_retry_delays
        for attempt in range(1, len(delays) + 2):
            url = self._world.webhook_url
            status: int | None = None
            error: str | None = None
            if url is None:
                error = NO_URL
            else:
                status, error = await self._post(url, body, event)
            self._record(event, attempt=attempt, copy=copy, url=url, status=status, error=error)
            if after_first_attempt is not None:
                after_first_attempt()
                after_first_attempt = None
            if status is not None and 200 <= status < 300:
                return
            if attempt <= len(delays):
                await asyncio.sleep(delays[attempt - 1])

    async def _post(
        self, url: str, body: bytes, event: WebhookEvent
    ) -> tuple[int | None, str | None]:
        headers = {"Content-Type": "application/json"}
        now = int(self._world.clock())
        headers.update(
            signing_headers(self._config, body, message_id=message_id(event), timestamp=now)
        )
        async with self._slots:
            try:
                response = await self._client.post(url, content=body, headers=headers)
            except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
                return None, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return response.status_code, None

    def _record(
        self,
        event: WebhookEvent,
        *,
        attempt: int,
        copy: int,
        url: str | None,
        status: int | None,
        error: str | None,
    ) -> None:
        faults = set(event.faults)
        if copy == 1:
            faults.discard("webhook_duplicate")
        self._world.record_attempt(
            WebhookAttempt(
                id=0,
                time=self._world.clock(),
                url=url,
                event=event.event.value,
                reference=event.reference,
                merchant_reference=event.merchant_reference,
                body=event.body(),
                attempt=attempt,
                copy=copy,
                status_code=status,
                error=error,
                faults=tuple(sorted(faults)),
                dropped=attempt == 0,
            )
        )
