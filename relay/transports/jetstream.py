"""NATS JetStream endpoints (`nats://`): a publish awaiting the stream's ack (docs/rules.md:
Relay destinations: message brokers).

`nats://user:pass@host:port?subject=S&stream=N`: published on subject S (`{type}` in it is the
event type; `payrecon.events.{type}` by default) with `Nats-Msg-Id` = the event id, so the
stream's own de-duplication drops a second copy of a retried attempt, and the Standard
Webhooks headers. With `stream=N` the ack must come from that stream. No stream taking the
subject is a failed attempt saying so (retried on the schedule), never a crash. `user@` alone
is a token. One connection per endpoint, reused, without the client's own reconnects: a
lost connection fails the attempt and the next one connects again.
"""

from __future__ import annotations

from dataclasses import dataclass

import nats
from nats.aio.client import Client
from nats.errors import NoRespondersError, NoServersError
from nats.js.client import JetStreamContext
from nats.js.errors import APIError, NoStreamResponseError

from relay import destinations
from relay.addresses import Network
from relay.claims import Job
from relay.deadlines import Deadlines
from relay.errors import StreamMissingError
from relay.keys import SecretBox
from relay.transport import Outcome
from relay.transports.brokers import Connections, attempt, checked_host, endpoint_key, event_type


@dataclass
class _Open:
    client: Client
    # The client's JetStream context, made once: making one per attempt cost about as much as
    # parsing the attempt's headers.
    js: JetStreamContext


async def _close(opened: _Open) -> None:
    await opened.client.close()


async def _quiet(*_args: object) -> None:
    # nats-py reports connection errors through callbacks; attempts report them instead.
    return None


class JetStreamTransport:
    """Publishes each job to its endpoint's subject and waits for the stream's ack."""

    def __init__(self, box: SecretBox, *, timeout: float, allow: tuple[Network, ...]) -> None:
        self.box = box
        self.timeout = timeout
        self.allow = allow
        self._deadlines = Deadlines(timeout)
        self._connections: Connections[_Open] = Connections(_close)

    async def _open(self, url: str) -> _Open:
        user, password = destinations.login(destinations.split_credentials(url)[1])
        address = await checked_host(url, self.allow)
        host = f"[{address}]" if ":" in address else address
        credentials: dict[str, str] = {}
        if user is not None and password is not None:
            credentials = {"user": user, "password": password}
        elif user is not None:
            credentials = {"token": user}
        errors: list[Exception] = []

        async def keep(error: Exception) -> None:
            errors.append(error)

        server = f"{host}:{destinations.port_of(url)}"
        try:
            client = await nats.connect(
                servers=[f"nats://{server}"],
                name="payrecon relay",
                connect_timeout=self.timeout,
                allow_reconnect=False,
                # nats-py's first connect loops over its pool without end at 0 attempts: one
                # quick second try, then NoServersError (the attempt fails, the schedule retries).
                max_reconnect_attempts=1,
                reconnect_time_wait=0.1,
                error_cb=keep,
                disconnected_cb=_quiet,
                closed_cb=_quiet,
                **credentials,
            )
        except NoServersError:
            last = f": {type(errors[-1]).__name__}: {errors[-1]}" if errors else ""
            raise ConnectionError(f"cannot connect to NATS at {server}{last}") from None
        return _Open(client, client.jetstream(timeout=self.timeout))

    async def send(self, job: Job) -> Outcome:
        """Publish the job's event and await the stream's ack; what came of it (never raises)."""
        key = endpoint_key(job)
        held: list[_Open] = []

        async def publish(url: str, headers: dict[str, str]) -> str | None:
            opened = await self._connections.get(key, lambda: self._open(url))
            held.append(opened)
            if not opened.client.is_connected:
                await self._connections.drop(key, opened)
                opened = await self._connections.get(key, lambda: self._open(url))
                held.append(opened)
            options = destinations.options(url)
            subject = destinations.expand(
                options.get("subject", destinations.DEFAULT_SUBJECT), event_type(job)
            )
            stream = options.get("stream")
            try:
                # The ack comes to the context's one reply subscription, matched by token: a
                # fifth cheaper per publish than a request with its own wait (bench/RESULTS.md
                # section 15). The attempt's timeout bounds the wait (a future dropped then).
                acked = await opened.js.publish_async(
                    subject,
                    job.body.encode(),
                    stream=stream,
                    headers={"Nats-Msg-Id": job.event_id, **headers},
                )
                ack = await acked
            except (NoRespondersError, NoStreamResponseError):
                raise StreamMissingError(
                    f"no JetStream stream takes subject {subject}: create one "
                    f"(nats stream add --subjects '{subject}' …) and the event is delivered "
                    "at its next attempt"
                ) from None
            except APIError as exc:
                if stream is not None and "stream" in str(exc).lower():
                    raise StreamMissingError(
                        f"stream {stream} does not take subject {subject}: {exc}"
                    ) from None
                raise
            said = f"stream {ack.stream} seq {ack.seq}"
            return said + " (duplicate)" if ack.duplicate else said

        async def failed() -> None:
            for opened in held[-1:]:
                if not opened.client.is_connected:
                    await self._connections.drop(key, opened)

        return await attempt(job, self.box, self._deadlines, publish, failed)

    async def aclose(self) -> None:
        """Close every endpoint's connection."""
        self._deadlines.close()
        await self._connections.close_all()
