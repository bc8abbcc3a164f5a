"""The worker's one transport: each job to the transport of its endpoint's kind (the URL's
scheme, relay.destinations). A broker's transport is made at the first job of its kind, so a
relay of HTTP endpoints only never opens a broker client."""

from __future__ import annotations

from relay.addresses import Network
from relay.claims import Job
from relay.destinations import Kind, kind_of
from relay.keys import SecretBox
from relay.transport import Outcome, Transport
from relay.transports.http import HttpTransport


class Router:
    """Sends each job through the transport of its endpoint's kind; closes them all."""

    def __init__(
        self, box: SecretBox, *, timeout: float, concurrency: int, allow: tuple[Network, ...]
    ) -> None:
        self.box = box
        self.timeout = timeout
        self.concurrency = concurrency
        self.allow = allow
        self.http = HttpTransport(box, timeout=timeout, concurrency=concurrency, allow=allow)
        self._brokers: dict[Kind, Transport] = {}

    def _broker(self, kind: Kind) -> Transport:
        found = self._brokers.get(kind)
        if found is not None:
            return found
        made: Transport
        if kind is Kind.AMQP:
            from relay.transports.rabbitmq import RabbitTransport

            made = RabbitTransport(self.box, timeout=self.timeout, allow=self.allow)
        elif kind is Kind.NATS:
            from relay.transports.jetstream import JetStreamTransport

            made = JetStreamTransport(self.box, timeout=self.timeout, allow=self.allow)
        else:
            from relay.transports.redis_streams import RedisStreamsTransport

            made = RedisStreamsTransport(
                self.box, timeout=self.timeout, concurrency=self.concurrency, allow=self.allow
            )
        self._brokers[kind] = made
        return made

    async def send(self, job: Job) -> Outcome:
        """The job through its kind's transport (never raises)."""
        kind = kind_of(job.endpoint.url)
        if kind is Kind.HTTP:
            return await self.http.send(job)
        return await self._broker(kind).send(job)

    async def aclose(self) -> None:
        """Close every transport made."""
        for transport in self._brokers.values():
            await transport.aclose()
        await self.http.aclose()
