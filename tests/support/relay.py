"""Relay test helpers: endpoints, transfers with events, and a consumer that verifies them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, func, insert, select
from standardwebhooks.webhooks import Webhook, WebhookVerificationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ledger.db import read_session, write_session
from ledger.events.outbox import emit
from ledger.events.types import RelayEventType, Subject
from ledger.models import Alert, RelayAttempt, RelayDelivery, Transfer
from ledger.types import utcnow
from payrecon.wiring import keyed_alert
from relay import endpoints
from relay.addresses import parse_networks
from relay.keys import SecretBox
from relay.recorder import Summary
from relay.worker import Worker, WorkerConfig
from tests.support.servers import running_server

RELAY_KEYS = "test-relay-key-" + "k" * 32
# Test consumers listen on loopback, which endpoints reach only when it is allowed
# (PAYRECON_RELAY_ALLOW_NETWORKS); the address-rule tests pass their own.
LOOPBACK = parse_networks("127.0.0.0/8")


def box() -> SecretBox:
    """The SecretBox of RELAY_KEYS."""
    return SecretBox([RELAY_KEYS])


def add_endpoint(engine: Engine, url: str, types: str | None = None) -> tuple[int, str]:
    """A new enabled endpoint; its id and secret."""
    with write_session(engine) as session:
        endpoint, secret = endpoints.add(
            session, box(), url=url, types=types, now=utcnow(), allow=LOOPBACK
        )
        return int(endpoint.id or 0), secret


def add_transfers(engine: Engine, count: int) -> list[int]:
    """`count` new transfers; their ids."""
    tag = uuid.uuid4().hex[:8]
    now = utcnow()
    rows = [
        {
            "reference": f"T-{tag}-{i}",
            "origin": "api",
            "status": "pending",
            "confirmed": False,
            "check_attempts": 0,
            "not_found_count": 0,
            "event_sequence": 0,
            "created_at": now,
            "updated_at": now,
        }
        for i in range(count)
    ]
    with write_session(engine) as session:
        session.execute(insert(Transfer.__table__), rows)  # type: ignore[attr-defined]
        found = session.execute(
            select(Transfer.id).where(Transfer.reference.like(f"T-{tag}-%"))  # type: ignore[union-attr,attr-defined]
        )
        return sorted(int(row) for row in found.scalars())


def emit_events(engine: Engine, transfer_ids: list[int], *, rounds: int = 1) -> list[str]:
    """`rounds` transfer.confirmed events for each transfer (one transaction per round); ids."""
    ids = []
    for number in range(rounds):
        with write_session(engine) as session:
            for transfer_id in transfer_ids:
                ids.append(
                    emit(
                        session,
                        type=RelayEventType.TRANSFER_CONFIRMED,
                        subject=Subject.TRANSFER,
                        subject_id=transfer_id,
                        reference=f"ref-{transfer_id}",
                        data={"reference": f"ref-{transfer_id}", "round": number},
                        now=utcnow(),
                    )
                )
    return ids


def emit_backlog(engine: Engine, count: int) -> list[str]:
    """`count` new transfers with one transfer.confirmed event each, a thousand events per
    transaction (a backlog for the worker); the events' ids."""
    transfers = add_transfers(engine, count)
    return [
        event
        for start in range(0, count, 1000)
        for event in emit_events(engine, transfers[start : start + 1000])
    ]


@dataclass
class Received:
    """One request the consumer got."""

    event_id: str
    path: str
    verified: bool
    sequence: int
    subject: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Consumer:
    """A Starlette consumer: verifies each request with every known secret, records it, and
    answers what `respond(path, count_so_far)` says (200 by default)."""

    secrets: list[str] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    respond: Callable[[str, int], Response] | None = None
    delay: float = 0.0  # seconds each answer to /hook waits
    lock: threading.Lock = field(default_factory=threading.Lock)

    def verify(self, body: bytes, headers: dict[str, str]) -> bool:
        for secret in self.secrets:
            try:
                Webhook(secret).verify(body, headers)
                return True
            except WebhookVerificationError:
                continue
        return False

    async def hook(self, request: Request) -> Response:
        body = await request.body()
        headers = dict(request.headers)
        document = json.loads(body)
        with self.lock:
            self.received.append(
                Received(
                    event_id=document["id"],
                    path=request.url.path,
                    verified=self.verify(body, headers),
                    sequence=document["sequence"],
                    subject=document["data"].get("reference", ""),
                    headers=headers,
                    body=body,
                )
            )
            count = len(self.received)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.respond is not None:
            return self.respond(request.url.path, count)
        return Response("ok")

    def app(self) -> Starlette:
        async def hang(request: Request) -> Response:
            await asyncio.sleep(30)
            return Response("late")

        async def redirect(request: Request) -> Response:
            return Response(status_code=302, headers={"location": "/hook"})

        async def huge(request: Request) -> Response:
            async def chunks() -> Any:
                block = b"x" * 1_048_576
                for _ in range(100):
                    yield block

            return StreamingResponse(chunks(), status_code=500)

        async def slow(request: Request) -> Response:
            await self.hook(request)
            await asyncio.sleep(1.5)
            return Response("slow ok")

        return Starlette(
            routes=[
                Route("/slow", slow, methods=["POST"]),
                Route("/hook", self.hook, methods=["POST"]),
                Route("/other", self.hook, methods=["POST"]),
                Route("/hang", hang, methods=["POST"]),
                Route("/redirect", redirect, methods=["POST"]),
                Route("/huge", huge, methods=["POST"]),
            ]
        )

    def ids(self, path: str = "/hook") -> list[str]:
        """The event ids received at `path`, in arrival order."""
        with self.lock:
            return [item.event_id for item in self.received if item.path == path]

    def unique(self) -> int:
        """How many distinct events were received."""
        with self.lock:
            return len({item.event_id for item in self.received})


@contextlib.contextmanager
def serving(consumer: Consumer) -> Iterator[str]:
    """The consumer on a free loopback port; its base URL."""
    with running_server(consumer.app(), timeout_graceful_shutdown=1) as url:
        yield url


def config(**overrides: Any) -> WorkerConfig:
    """A worker configuration for tests: a short schedule and timeout."""
    values: dict[str, Any] = {
        "schedule": (0.1, 0.2),
        "timeout": 2.0,
        "concurrency": 8,
        "allow": LOOPBACK,
    }
    values.update(overrides)
    return WorkerConfig(**values)


def worker(engine: Engine, **overrides: Any) -> Worker:
    """A worker whose alerts go through the ledger's alert table (logged only)."""
    return Worker(engine, box(), config(**overrides), alert=keyed_alert(engine, None))


def run_until(
    engine: Engine, done: Callable[[], bool], *, limit: float = 60.0, **overrides: Any
) -> Summary:
    """Run a worker until `done()` is true (checked every 50 ms) or `limit` seconds pass."""

    async def main() -> Summary:
        running = worker(engine, **overrides)
        stop = asyncio.Event()
        task = asyncio.create_task(running.run(stop))
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not task.done():
            if await asyncio.to_thread(done):
                break
            await asyncio.sleep(0.05)
        stop.set()
        return await task

    return asyncio.run(main())


def count(engine: Engine, model: Any, *where: Any) -> int:
    """Rows of `model` matching `where`."""
    with read_session(engine) as session:
        return int(
            session.execute(select(func.count()).select_from(model).where(*where)).scalar_one()
        )


def deliveries(engine: Engine) -> list[RelayDelivery]:
    """Every delivery, by id."""
    with read_session(engine) as session:
        return list(session.execute(select(RelayDelivery).order_by(RelayDelivery.id)).scalars())  # type: ignore[arg-type]


def attempts(engine: Engine) -> list[RelayAttempt]:
    """Every attempt, by id."""
    with read_session(engine) as session:
        return list(session.execute(select(RelayAttempt).order_by(RelayAttempt.id)).scalars())  # type: ignore[arg-type]


def relay_alerts(engine: Engine) -> list[Alert]:
    """The relay's alerts in the alert table."""
    with read_session(engine) as session:
        return list(
            session.execute(select(Alert).where(Alert.key.like("relay-%"))).scalars()  # type: ignore[attr-defined]
        )
