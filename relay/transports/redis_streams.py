"""Redis Streams endpoints (`redis://`, `rediss://`): one XADD per attempt (docs/rules.md:
Relay destinations: message brokers).

`redis://user:pass@host:port/db?stream=S&maxlen=N`: XADD to stream S (`payrecon.events` by
default) with the fields `id`, `type`, `body`, `webhook-signature`, and `webhook-id` and
`webhook-timestamp` beside them, so a consumer verifies exactly as an HTTP one does. With
`maxlen` the stream is trimmed to about N entries (`MAXLEN ~`). The entry id Redis answers is
the confirmation. One client (with its pool) per endpoint, connected to the checked address;
the client's own retries are off, so a failure is an attempt retried on the schedule.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from relay import destinations
from relay.addresses import Network
from relay.claims import Job
from relay.keys import SecretBox
from relay.transport import Outcome
from relay.transports.brokers import Connections, attempt, checked_host, endpoint_key, event_type


async def _close(client: Redis) -> None:
    await client.aclose()


class RedisStreamsTransport:
    """XADDs each job to its endpoint's stream; the entry id is the confirmation."""

    def __init__(
        self, box: SecretBox, *, timeout: float, concurrency: int, allow: tuple[Network, ...]
    ) -> None:
        self.box = box
        self.timeout = timeout
        self.concurrency = concurrency
        self.allow = allow
        self._connections: Connections[Redis] = Connections(_close)

    async def _open(self, url: str) -> Redis:
        parts = urlsplit(url)
        user, password = destinations.login(destinations.split_credentials(url)[1])
        address = await checked_host(url, self.allow)
        tls = parts.scheme.lower() == "rediss"
        database = parts.path[1:] if len(parts.path) > 1 else "0"
        return Redis(
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

    async def send(self, job: Job) -> Outcome:
        """XADD the job's event; what came of it (never raises)."""
        key = endpoint_key(job)

        async def publish(url: str, headers: dict[str, str]) -> str | None:
            client = await self._connections.get(key, lambda: self._open(url))
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
            entry = await client.xadd(
                options.get("stream", destinations.DEFAULT_STREAM),
                fields,  # type: ignore[arg-type]
                maxlen=int(maxlen) if maxlen else None,
                approximate=True,
            )
            return f"entry {entry.decode() if isinstance(entry, bytes) else entry}"

        async def failed() -> None:
            return None  # the client's pool opens a new connection for the next command

        return await attempt(job, self.box, self.timeout, publish, failed)

    async def aclose(self) -> None:
        """Close every endpoint's client."""
        await self._connections.close_all()
