"""Redis Streams endpoints (`redis://`, `rediss://`): one XADD per attempt (docs/rules.md:
Relay destinations: message brokers).

`redis://user:pass@host:port/db?stream=S&maxlen=N`: XADD to stream S (`payrecon.events` by
default) with the fields `id`, `type`, `body`, `webhook-signature`, and `webhook-id` and
`webhook-timestamp` beside them, so a consumer verifies exactly as an HTTP one does. With
`maxlen` the stream is trimmed to about N entries (`MAXLEN ~`). The entry id Redis answers is
the confirmation. One client (with its pool) per endpoint, connected to the checked address;
the client's own retries are off, so a failure is an attempt retried on the schedule.

The XADDs of attempts started in the same turn of the event loop go to Redis as one pipeline
(no transaction: each is its own command with its own answer, in order), so a worker with
sixteen attempts in flight pays one round trip and one socket write for them instead of
sixteen (bench/RESULTS.md section 15). An entry's id still confirms that entry alone; an error
fails the attempts whose commands it answered, and a lost connection fails all of the batch
(their entries may have been added: at least once, as after a timeout).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from relay import destinations
from relay.addresses import Network
from relay.claims import Job
from relay.deadlines import Deadlines
from relay.keys import SecretBox
from relay.transport import Outcome
from relay.transports.brokers import Connections, attempt, checked_host, endpoint_key, event_type


class _Batched:
    """One endpoint's client, and the XADDs waiting for the next pipeline."""

    __slots__ = ("client", "sending", "waiting")

    def __init__(self, client: Redis) -> None:
        self.client = client
        self.waiting: list[tuple[tuple[Any, ...], dict[str, Any], asyncio.Future[Any]]] = []
        self.sending: set[asyncio.Task[None]] = set()  # pipelines under way (kept referenced)

    def xadd(self, *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
        """The entry id of an XADD sent with the others of this loop turn."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if not self.waiting:
            asyncio.get_running_loop().call_soon(self._flush)
        self.waiting.append((args, kwargs, future))
        return future

    def _flush(self) -> None:
        batch, self.waiting = self.waiting, []
        task = asyncio.ensure_future(self._send(batch))
        self.sending.add(task)
        task.add_done_callback(self.sending.discard)

    async def _send(
        self, batch: list[tuple[tuple[Any, ...], dict[str, Any], asyncio.Future[Any]]]
    ) -> None:
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for args, kwargs, _future in batch:
                    pipe.xadd(*args, **kwargs)
                answers = await pipe.execute(raise_on_error=False)
        except BaseException as exc:  # the connection: every command of the batch failed
            for _args, _kwargs, future in batch:
                if not future.done():
                    future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for (_args, _kwargs, future), answer in zip(batch, answers, strict=True):
            if future.done():  # its attempt timed out meanwhile
                continue
            if isinstance(answer, BaseException):
                future.set_exception(answer)
            else:
                future.set_result(answer)


async def _close(batched: _Batched) -> None:
    await batched.client.aclose()


class RedisStreamsTransport:
    """XADDs each job to its endpoint's stream; the entry id is the confirmation."""

    def __init__(
        self, box: SecretBox, *, timeout: float, concurrency: int, allow: tuple[Network, ...]
    ) -> None:
        self.box = box
        self.timeout = timeout
        self.concurrency = concurrency
        self.allow = allow
        self._deadlines = Deadlines(timeout)
        self._connections: Connections[_Batched] = Connections(_close)

    async def _open(self, url: str) -> _Batched:
        parts = urlsplit(url)
        user, password = destinations.login(destinations.split_credentials(url)[1])
        address = await checked_host(url, self.allow)
        tls = parts.scheme.lower() == "rediss"
        database = parts.path[1:] if len(parts.path) > 1 else "0"
        client = Redis(
            host=parts.hostname or address if tls else address,
            port=destinations.port_of(url),
            db=int(database),
            username=user if password is not None else None,
            password=password if password is not None else user,
            ssl=tls,
            socket_timeout=self.timeout,
            socket_connect_timeout=self.timeout,
            retry=Retry(NoBackoff(), 0),
            max_connections=self.concurrency,
            client_name="payrecon-relay",
        )
        return _Batched(client)

    async def send(self, job: Job) -> Outcome:
        """XADD the job's event; what came of it (never raises)."""
        key = endpoint_key(job)

        async def publish(url: str, headers: dict[str, str]) -> str | None:
            batched = await self._connections.get(key, lambda: self._open(url))
            options = destinations.options(url)
            maxlen = options.get("maxlen")
            fields = {
                "id": job.event_id,
                "type": event_type(job),
                "body": job.body,
                "webhook-id": headers["webhook-id"],
                "webhook-timestamp": headers["webhook-timestamp"],
                "webhook-signature": headers["webhook-signature"],
                # The attempt's trace context when tracing is on (docs/relay.md).
                **{k: v for k, v in headers.items() if k in ("traceparent", "tracestate")},
            }
            entry = await batched.xadd(
                options.get("stream", destinations.DEFAULT_STREAM),
                fields,
                maxlen=int(maxlen) if maxlen else None,
                approximate=True,
            )
            return f"entry {entry.decode() if isinstance(entry, bytes) else entry}"

        async def failed() -> None:
            return None  # the client's pool opens a new connection for the next command

        return await attempt(job, self.box, self._deadlines, publish, failed)

    async def aclose(self) -> None:
        """Close every endpoint's client."""
        self._deadlines.close()
        await self._connections.close_all()
