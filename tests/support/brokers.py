"""Broker test helpers: for RabbitMQ, NATS JetStream and Redis Streams, a unique destination per
test (exchange and queue, stream, stream key), the messages it got as (body, headers) to verify
with `standardwebhooks`, a way to make it refuse publishes for a while, and a TCP proxy to make
it unreachable. A broker that does not answer skips its tests, naming it and the command that
starts it (`.ci/brokers` runs them all)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

T = TypeVar("T")

START = {
    "rabbitmq": "rabbitmq-server -detached",
    "nats": (
        "start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- "
        "-a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log"
    ),
    "redis": (
        'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" '
        "--appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log"
    ),
}
PORTS = {"rabbitmq": 5672, "nats": 4222, "redis": 6379}
KINDS = ("rabbitmq", "nats", "redis")


def run(coroutine: Awaitable[T]) -> T:
    """The coroutine's result, on a loop of its own."""

    async def main() -> T:
        return await coroutine

    return asyncio.run(main())


def require(kind: str) -> None:
    """Skip the test, naming the broker and its start command, when it does not answer."""
    try:
        with socket.create_connection(("127.0.0.1", PORTS[kind]), timeout=2):
            return
    except OSError:
        pytest.skip(
            f"{kind} is not answering on 127.0.0.1:{PORTS[kind]} "
            f"(start it with `{START[kind]}`, or run .ci/brokers / make services)"
        )


@dataclass
class Message:
    """One message a destination holds: its body, its Standard Webhooks headers, and the id
    the broker carried beside them (message_id, Nats-Msg-Id, the entry's `id` field)."""

    body: bytes
    headers: dict[str, str]
    broker_id: str

    def verified(self, secrets: list[str]) -> bool:
        """True when one of the secrets verifies the signature (standardwebhooks)."""
        for secret in secrets:
            try:
                Webhook(secret).verify(self.body, self.headers)
                return True
            except WebhookVerificationError:
                continue
        return False


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class Destination:
    """A unique destination on one broker for one test."""

    kind: str
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    port: int = 0  # another port (a proxy's) instead of the broker's own

    def __post_init__(self) -> None:
        require(self.kind)
        self.port = self.port or PORTS[self.kind]

    # Names --------------------------------------------------------------------------------

    @property
    def exchange(self) -> str:
        return f"payrecon-test-{self.tag}"

    @property
    def queue(self) -> str:
        return f"payrecon-test-q-{self.tag}"

    @property
    def stream(self) -> str:
        return f"PAYRECON_TEST_{self.tag}"

    @property
    def subjects(self) -> str:
        return f"t{self.tag}.>"

    @property
    def key(self) -> str:
        return f"payrecon-test:{self.tag}"

    def url(self, credentials: str | None = None, port: int | None = None, **extra: str) -> str:
        """The endpoint URL of this destination (through `port` when given)."""
        port = port or self.port
        auth = f"{credentials}@" if credentials else ""
        query = "&".join(f"{k}={v}" for k, v in extra.items())
        if self.kind == "rabbitmq":
            auth = auth or "guest:guest@"
            base = f"amqp://{auth}127.0.0.1:{port}/?exchange={self.exchange}"
        elif self.kind == "nats":
            base = (
                f"nats://{auth}127.0.0.1:{port}?subject=t{self.tag}.{{type}}&stream={self.stream}"
            )
        else:
            base = f"redis://{auth}127.0.0.1:{port}/0?stream={self.key}"
        return f"{base}&{query}" if query else base

    # Set-up, reading, refusing -------------------------------------------------------------

    def create(self) -> None:
        """Make the exchange and its queue, or the stream (Redis makes its stream itself)."""
        run(self._create())

    async def _create(self) -> None:
        if self.kind == "rabbitmq":
            async with _rabbit() as channel:
                exchange = await channel.declare_exchange(self.exchange, "topic", durable=True)
                queue = await channel.declare_queue(self.queue, durable=True)
                await queue.bind(exchange, "#")
        elif self.kind == "nats":
            async with _nats() as (_client, js):
                await js.add_stream(name=self.stream, subjects=[self.subjects])

    def messages(self) -> list[Message]:
        """Every message the destination holds, oldest first."""
        return run(self._messages())

    async def _messages(self) -> list[Message]:
        found: list[Message] = []
        if self.kind == "rabbitmq":
            async with _rabbit() as channel:
                queue = await channel.declare_queue(self.queue, durable=True, passive=True)
                while True:
                    message = await queue.get(no_ack=False, fail=False)
                    if message is None:
                        break
                    headers = {k: _text(v) for k, v in (message.headers or {}).items()}
                    found.append(Message(message.body, headers, str(message.message_id)))
                # Not acknowledged: the channel's close puts them back for the next read.
        elif self.kind == "nats":
            async with _nats() as (_client, js):
                info = await js.stream_info(self.stream)
                for seq in range(info.state.first_seq, info.state.last_seq + 1):
                    with contextlib.suppress(Exception):
                        raw = await js.get_msg(self.stream, seq)
                        headers = dict(raw.headers or {})
                        broker_id = headers.get("Nats-Msg-Id", "")
                        found.append(Message(raw.data or b"", headers, broker_id))
        else:
            async with _redis() as client:
                for _entry, fields in await client.xrange(self.key):
                    values = {_text(k): _text(v) for k, v in fields.items()}
                    headers = {
                        k: v
                        for k, v in values.items()
                        if k.startswith("webhook-") or k == "traceparent"
                    }
                    found.append(Message(values["body"].encode(), headers, values["id"]))
        return found

    def refuse(self, refusing: bool) -> None:
        """Make the destination refuse publishes (or take them again), keeping what it holds:
        RabbitMQ's queue unbound (a message no queue takes comes back), the NATS stream's
        subjects moved away (no stream takes it), Redis's key made read-only for the test's
        user (NOPERM: pass `redis_user` credentials)."""
        run(self._refuse(refusing))

    async def _refuse(self, refusing: bool) -> None:
        if self.kind == "rabbitmq":
            async with _rabbit() as channel:
                exchange = await channel.get_exchange(self.exchange)
                queue = await channel.declare_queue(self.queue, durable=True, passive=True)
                if refusing:
                    await queue.unbind(exchange, "#")
                else:
                    await queue.bind(exchange, "#")
        elif self.kind == "nats":
            from nats.js.api import StreamConfig

            async with _nats() as (_client, js):
                subjects = [f"x{self.tag}.>"] if refusing else [self.subjects]
                await js.update_stream(StreamConfig(name=self.stream, subjects=subjects))
        else:
            async with _redis() as client:
                rights = "-xadd" if refusing else "+xadd"
                await client.execute_command("ACL", "SETUSER", self.user, rights)

    def publish(self, body: str, headers: dict[str, str]) -> None:
        """Publish a message straight to the destination, as a stranger could."""

        async def send() -> None:
            if self.kind == "rabbitmq":
                import aio_pika

                async with _rabbit() as channel:
                    exchange = await channel.get_exchange(self.exchange)
                    message = aio_pika.Message(body.encode(), headers=dict(headers))
                    await exchange.publish(message, "transfer.confirmed")
            elif self.kind == "nats":
                async with _nats() as (_client, js):
                    await js.publish(
                        f"t{self.tag}.transfer.confirmed", body.encode(), headers=headers
                    )
            else:
                async with _redis() as client:
                    fields = {"id": headers["webhook-id"], "body": body, **headers}
                    await client.xadd(self.key, fields)  # type: ignore[arg-type]

        run(send())

    @property
    def user(self) -> str:
        return f"payrecon-test-{self.tag}"

    def redis_user(self, password: str) -> str:
        """A Redis ACL user of this test allowed its key only; its `user:password`."""

        async def make() -> None:
            async with _redis() as client:
                await client.execute_command(
                    "ACL", "SETUSER", self.user, "on", f">{password}", f"~{self.key}", "+@all"
                )

        run(make())
        return f"{self.user}:{password}"

    def drop(self) -> None:
        """Remove what create made (and the test's Redis user)."""
        with contextlib.suppress(Exception):
            run(self._drop())

    async def _drop(self) -> None:
        if self.kind == "rabbitmq":
            async with _rabbit() as channel:
                await channel.queue_delete(self.queue)
                await channel.exchange_delete(self.exchange)
        elif self.kind == "nats":
            async with _nats() as (_client, js):
                await js.delete_stream(self.stream)
        else:
            async with _redis() as client:
                await client.delete(self.key)
                await client.execute_command("ACL", "DELUSER", self.user)


@contextlib.asynccontextmanager
async def _rabbit() -> Any:
    import aio_pika

    connection = await aio_pika.connect("amqp://guest:guest@127.0.0.1:5672/")
    try:
        yield await connection.channel()
    finally:
        await connection.close()


@contextlib.asynccontextmanager
async def _nats() -> Any:
    import nats

    client = await nats.connect("nats://127.0.0.1:4222")
    try:
        yield client, client.jetstream()
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def _redis() -> Any:
    from redis.asyncio import Redis

    client = Redis(host="127.0.0.1", port=6379)
    try:
        yield client
    finally:
        await client.aclose()


@contextlib.contextmanager
def destination(kind: str, **extra: Any) -> Iterator[Destination]:
    """A created unique destination, dropped after the test."""
    made = Destination(kind, **extra)
    made.create()
    try:
        yield made
    finally:
        made.drop()


class Proxy:
    """A TCP proxy on a free loopback port to a broker, that can be cut (listener closed and
    every connection through it dropped) and restored on the same port."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.up()

    def _call(self, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(factory(), self._loop).result(timeout=10)

    def up(self) -> None:
        """Listen (again) and forward."""

        async def start() -> None:
            self._server = await asyncio.start_server(
                self._handle, "127.0.0.1", self.port, reuse_address=True
            )

        self._call(start)

    def down(self) -> None:
        """Stop listening and drop every connection through the proxy."""

        async def cut() -> None:
            if self._server is not None:
                self._server.close()
                self._server = None
            for writer in list(self._writers):
                writer.transport.abort()
            self._writers.clear()

        self._call(cut)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                "127.0.0.1", self.target
            )
        except OSError:
            writer.transport.abort()
            return
        self._writers.update({writer, upstream_writer})

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                sink.transport.abort()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    def close(self) -> None:
        """Cut and stop the proxy's thread."""
        self.down()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
