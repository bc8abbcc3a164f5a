"""What the broker transports share: one connection per endpoint, checked addresses, the
attempt's deadline and the turning of any failure into an Outcome (relay.transport).

Each endpoint gets one connection (and channel), opened at its first attempt and reused by
every later one; an attempt that fails drops it, so the next attempt connects again (a broker
restarted, a connection lost). Before connecting, the broker's host is resolved and every
address judged by the address rules (relay.connect: docs/rules.md, Robustness rules), and the
connection is made to the checked address itself — brokers are no way into the host either.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar
from urllib.parse import urlsplit

import structlog

from relay import destinations, signing
from relay.addresses import Network
from relay.claims import Job
from relay.connect import check_addresses, resolve
from relay.deadlines import Deadlines
from relay.endpoints import connect_url
from relay.errors import DestinationRefusedError, RelayError
from relay.keys import SecretBox
from relay.transport import MAX_ERROR, Clock, Outcome, error_text, text
from telemetry import tracing

logger = structlog.get_logger(__name__)

C = TypeVar("C")


async def checked_host(url: str, allow: tuple[Network, ...]) -> str:
    """The address to connect to for the URL's host: resolved, every address judged
    (DestinationRefusedError), the first one returned as text."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = destinations.port_of(url)
    addresses = await resolve(host, port)
    check_addresses(host, addresses, allow)
    if not addresses:
        raise DestinationRefusedError(f"{host} has no address")
    return str(addresses[0])


def event_type(job: Job) -> str:
    """The job's event type (the body's `type`; the claim reads it from the event's row)."""
    if job.event_type:
        return job.event_type
    value = json.loads(job.body).get("type")
    return str(value) if value else "event"


def endpoint_key(job: Job) -> tuple[int, str, str | None]:
    """What one connection serves: the endpoint as it is now (a new URL, a new connection)."""
    endpoint = job.endpoint
    return (int(endpoint.id or 0), endpoint.url, endpoint.credentials_sealed)


class Connections(Generic[C]):
    """One open connection per endpoint key, opened once however many attempts wait for it."""

    def __init__(self, close: Callable[[C], Awaitable[None]]) -> None:
        self._open: dict[tuple[int, str, str | None], C] = {}
        self._locks: dict[tuple[int, str, str | None], asyncio.Lock] = {}
        self._close = close

    async def get(self, key: tuple[int, str, str | None], opener: Callable[[], Awaitable[C]]) -> C:
        """The key's connection, opened by `opener` when there is none."""
        found = self._open.get(key)
        if found is not None:
            return found
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            found = self._open.get(key)
            if found is None:
                found = await opener()
                for stale in [other for other in self._open if other[0] == key[0]]:
                    await self.drop(stale)  # the endpoint's URL changed
                self._open[key] = found
            return found

    async def drop(self, key: tuple[int, str, str | None], connection: C | None = None) -> None:
        """Close the key's connection (only if it is still `connection`, when given)."""
        found = self._open.get(key)
        if found is None or (connection is not None and found is not connection):
            return
        del self._open[key]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._close(found), timeout=5)

    async def close_all(self) -> None:
        """Close every connection (the worker stops)."""
        for key in list(self._open):
            await self.drop(key)


async def attempt(
    job: Job,
    box: SecretBox,
    deadlines: Deadlines,
    publish: Callable[[str, dict[str, str]], Awaitable[str | None]],
    on_failure: Callable[[], Awaitable[None]],
) -> Outcome:
    """One attempt at a broker: sign, `publish(url, headers)` within the timeout (`deadlines`:
    its result is what the broker said, kept as the attempt's head), and any failure an
    Outcome with an error after `on_failure()` (dropping the connection). Never raises, but
    a cancellation from outside (the worker stopping) goes on."""
    clock = Clock()
    try:
        headers = signing.job_headers(job, box, clock.attempted_at)
        # The attempt's W3C traceparent rides with the message, as on an HTTP delivery (a
        # no-op while tracing is off).
        tracing.inject(headers)
        url = connect_url(job.endpoint, box)
    except RelayError as exc:
        return clock.outcome(error=text(f"not signed: {exc}", MAX_ERROR))
    watch = deadlines.start()
    try:
        said = await publish(url, headers)
    except asyncio.CancelledError:
        if not watch.expired:
            raise
        return await _expired(clock, deadlines, on_failure)
    except DestinationRefusedError as exc:
        return clock.outcome(error=text(str(exc), MAX_ERROR))
    except Exception as exc:  # a broker must never crash the worker
        if watch.expired:  # a client library that turned the cancellation into its own error
            return await _expired(clock, deadlines, on_failure)
        await on_failure()
        return clock.outcome(error=_hidden(error_text(exc), url, job))
    finally:
        watch.done = True
    return clock.outcome(confirmed=True, head=text(said, 1024) if said else None)


async def _expired(
    clock: Clock, deadlines: Deadlines, on_failure: Callable[[], Awaitable[None]]
) -> Outcome:
    # The attempt's deadline cancelled it: that cancellation is handled here, not passed on.
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
    await on_failure()
    return clock.outcome(error=f"no confirmation within {deadlines.timeout:g} s")


def _hidden(message: str, url: str, job: Job) -> str:
    # A client library's error may quote the URL it connected to: never its password.
    _bare, credentials = destinations.split_credentials(url)
    if credentials:
        message = message.replace(url, job.endpoint.url).replace(credentials, "***")
        _user, password = destinations.login(credentials)
        if password:
            message = message.replace(password, "***")
    return message
