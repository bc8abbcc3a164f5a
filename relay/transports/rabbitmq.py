"""RabbitMQ endpoints (`amqp://`, `amqps://`): a persistent publish awaiting the broker's
confirm (docs/rules.md: Relay destinations: message brokers).

`amqp://user:pass@host:port/vhost?exchange=X&routing_key=K`: published to exchange X (the
default exchange when none) with routing key K (`{type}` in it is the event type; the type
itself by default), `message_id` = the event id, persistent, the Standard Webhooks headers as
message headers, `mandatory`: a message no queue takes comes back and the attempt fails
(a confirm alone would call a dropped message delivered). One connection and one channel
with publisher confirms per endpoint, reused; a failure closes them and the next attempt
connects again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import aio_pika
from aio_pika.abc import AbstractChannel, AbstractConnection, AbstractExchange

from relay import destinations
from relay.addresses import Network
from relay.claims import Job
from relay.deadlines import Deadlines
from relay.keys import SecretBox
from relay.transport import Outcome
from relay.transports.brokers import Connections, attempt, checked_host, endpoint_key, event_type


@dataclass
class _Open:
    connection: AbstractConnection
    channel: AbstractChannel
    exchange: AbstractExchange


async def _close(opened: _Open) -> None:
    await opened.connection.close()


class RabbitTransport:
    """Publishes each job to its endpoint's exchange and waits for the confirm."""

    def __init__(self, box: SecretBox, *, timeout: float, allow: tuple[Network, ...]) -> None:
        self.box = box
        self.timeout = timeout
        self.allow = allow
        self._deadlines = Deadlines(timeout)
        self._connections: Connections[_Open] = Connections(_close)

    async def _open(self, url: str) -> _Open:
        parts = urlsplit(url)
        user, password = destinations.login(destinations.split_credentials(url)[1])
        address = await checked_host(url, self.allow)
        tls = parts.scheme.lower() == "amqps"
        vhost = unquote(parts.path[1:]) if len(parts.path) > 1 else "/"
        connection = await aio_pika.connect(
            # TLS checks the certificate against the URL's name; plain AMQP goes to the very
            # address that was checked.
            host=(parts.hostname or address) if tls else address,
            port=destinations.port_of(url),
            login=user or "guest",
            password=password or "guest",
            virtualhost=vhost,
            ssl=tls,
            timeout=self.timeout,
            client_properties={"connection_name": "payrecon relay"},
        )
        try:
            channel = await connection.channel(publisher_confirms=True, on_return_raises=True)
            name = destinations.options(url).get("exchange")
            exchange = (
                await channel.get_exchange(name, ensure=False) if name else channel.default_exchange
            )
        except BaseException:
            await connection.close()
            raise
        return _Open(connection, channel, exchange)

    async def send(self, job: Job) -> Outcome:
        """Publish the job's event and await its confirm; what came of it (never raises)."""
        key = endpoint_key(job)
        held: list[_Open] = []

        async def publish(url: str, headers: dict[str, str]) -> str | None:
            opened = await self._connections.get(key, lambda: self._open(url))
            held.append(opened)
            if opened.channel.is_closed or opened.connection.is_closed:
                await self._connections.drop(key, opened)
                opened = await self._connections.get(key, lambda: self._open(url))
                held.append(opened)
            kind = event_type(job)
            template = destinations.options(url).get(
                "routing_key", destinations.DEFAULT_ROUTING_KEY
            )
            message = aio_pika.Message(
                body=job.body.encode(),
                headers=dict(headers),
                content_type="application/json",
                delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                message_id=job.event_id,
                type=kind,
                app_id="payrecon",
                timestamp=dt.datetime.fromtimestamp(int(headers["webhook-timestamp"]), dt.UTC),
            )
            await opened.exchange.publish(
                message,
                destinations.expand(template, kind),
                mandatory=True,  # no timeout of its own: the attempt's bounds it
            )
            return None

        async def failed() -> None:
            for opened in held[-1:]:
                await self._connections.drop(key, opened)

        return await attempt(job, self.box, self._deadlines, publish, failed)

    async def aclose(self) -> None:
        """Close every endpoint's connection."""
        self._deadlines.close()
        await self._connections.close_all()
