"""A broker that takes the connection and then says nothing: each transport gives the attempt
up at its timeout (relay.deadlines) with a clear error, and the next attempt is not stuck."""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from ledger.models import RelayEndpoint
from relay.claims import Job
from relay.transport import Outcome
from relay.transports.router import Router
from tests.support import relay as support


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback TCP server that accepts, reads and never writes a byte."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    held: list[socket.socket] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _address = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        done.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()


def _job(url: str, number: int) -> Job:
    box = support.box()
    endpoint = RelayEndpoint(
        id=1, url=url, secret_sealed=box.seal("whsec_" + "A" * 32), enabled=True
    )
    until = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
    body = f'{{"id":"evt_{number}","type":"transfer.confirmed","sequence":1,"data":{{}}}}'
    return Job(number, 0, endpoint, f"evt_{number}", body, f"transfer:T-{number}", 1, until)


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:{port}/0?stream=s",
        "nats://127.0.0.1:{port}?subject=s",
        "amqp://guest:guest@127.0.0.1:{port}/",
    ],
    ids=["redis", "nats", "rabbitmq"],
)
def test_a_broker_that_never_answers_fails_each_attempt_at_the_timeout(
    silent_port: int, url: str
) -> None:
    """Two rounds of three attempts each fail after about the timeout, saying so."""
    target = url.format(port=silent_port)

    async def main() -> list[tuple[Outcome, float]]:
        router = Router(support.box(), timeout=0.5, concurrency=4, allow=support.LOOPBACK)
        try:
            answers = []
            for round_ in range(2):
                started = time.monotonic()
                jobs = [_job(target, round_ * 3 + n) for n in range(3)]
                outcomes = await asyncio.wait_for(
                    asyncio.gather(*(router.send(job) for job in jobs)), timeout=20
                )
                answers += [(outcome, time.monotonic() - started) for outcome in outcomes]
            return answers
        finally:
            await router.aclose()

    for outcome, elapsed in asyncio.run(main()):
        assert not outcome.ok
        assert outcome.error is not None
        assert "0.5 s" in outcome.error or "timeout" in outcome.error.lower(), outcome.error
        assert 0.4 <= elapsed < 10
