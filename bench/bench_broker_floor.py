"""The floor under `relay run`'s rate to each broker: what a delivery costs the relay's process
in the steps it cannot skip, beside the bare loop of bench_brokers.py (bench/RESULTS.md
section 21).

Run: .venv/bin/python bench/bench_broker_floor.py      # BENCH_BROKERS=nats, BENCH_BROKERS_DBS=…

The process pins itself to CPU 0, as bench_brokers.py pins the relay (the brokers' and
PostgreSQL's servers run where the scheduler puts them). Each step is timed alone, in CPU time
per delivery:

* ledger: claiming and recording BACKLOG deliveries, 256 at a time, with the worker's own
  functions (relay.claims.claim, relay.attempts.record) and every answer a confirmation;
* signing: the attempt's Standard Webhooks headers (relay.signing.job_headers);
* publish: the broker's client alone, publishing BACKLOG messages built and signed beforehand
  the way the relay's transport publishes them, at the worker's concurrency: NATS
  `publish_async` with the ack awaited, Redis XADDs pipelined sixteen at a time, RabbitMQ with
  publisher confirms.

The sum is what one delivery costs before anything else the worker does (its tasks, its
outcomes, its windows and logs); a process doing only that on one core reaches 1 / sum. Beside
it, the bare loop's best rate of BENCH_BROKERS_ROUNDS (bench_brokers.bench_baseline) and the
CPU a delivery that 0.7 of that rate allows: what is left of it over the floor is all the rest
of the worker may cost for the target to be reachable.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_brokers as brokers_bench  # noqa: E402

from ledger.db import create_db_engine, write_session  # noqa: E402
from relay import claims, signing  # noqa: E402
from relay.attempts import Result, record  # noqa: E402
from relay.keys import new_secret  # noqa: E402
from relay.transport import Outcome  # noqa: E402
from tests.support import brokers  # noqa: E402
from tests.support import relay as support  # noqa: E402

BACKLOG = brokers_bench.BACKLOG
CONCURRENCY = brokers_bench.CONCURRENCY
CLAIM = 256  # deliveries a claim and a record take (the worker's are up to this size)
PIPELINE = 16  # XADDs a Redis pipeline carries (the worker's concurrency)
# A message built and signed beforehand: its event id, body and headers.
_Message = tuple[str, bytes, dict[str, str]]


def ledger_and_signing(db: str, workdir: Path) -> tuple[float, float]:
    """CPU µs a delivery of claiming and recording BACKLOG deliveries, and of signing them."""
    url = brokers_bench._database(db, workdir)
    engine = create_db_engine(url)
    support.add_endpoint(engine, "nats://127.0.0.1:4222?subject=floor")
    support.emit_backlog(engine, BACKLOG)
    engine.dispose()
    # As `relay run` builds it: the worker's own writes skip SQLite's per-commit fsync.
    engine = create_db_engine(url, durable=False)
    box = support.box()
    ledger = signing_cpu = 0.0
    done = 0
    try:
        while True:
            now = dt.datetime.now(dt.UTC)
            started = time.process_time()
            with write_session(engine) as session:
                jobs = claims.claim(session, owner="floor", now=now, ttl=60, limit=CLAIM)
            claimed = time.process_time()
            if not jobs:
                break
            for job in jobs:
                signing.job_headers(job, box, now)
            signed = time.process_time()
            answered = [Result(job, Outcome(now, 1, confirmed=True, head="ok")) for job in jobs]
            with write_session(engine) as session:
                record(
                    session,
                    answered,
                    owner="floor",
                    schedule=(1.0,),
                    disable_after=86400.0,
                    now=dt.datetime.now(dt.UTC),
                )
            recorded = time.process_time()
            ledger += (claimed - started) + (recorded - signed)
            signing_cpu += signed - claimed
            done += len(jobs)
    finally:
        engine.dispose()
    if done != BACKLOG:
        raise RuntimeError(f"{db}: {done} of {BACKLOG} deliveries claimed and recorded")
    return ledger * 1e6 / done, signing_cpu * 1e6 / done


async def _concurrently(send: Callable[[int], Awaitable[object]]) -> None:
    # `concurrency` loops share one iterator, as the bare loop's senders do.
    numbers = iter(range(BACKLOG))

    async def sender() -> None:
        for number in numbers:
            await send(number)

    await asyncio.gather(*(sender() for _ in range(CONCURRENCY)))


async def _publish_nats(target: brokers.Destination, messages: list[_Message]) -> float:
    import nats

    client = await nats.connect("nats://127.0.0.1:4222")
    js = client.jetstream()
    subject = f"t{target.tag}.transfer.confirmed"

    async def send(number: int) -> None:
        event_id, body, headers = messages[number]
        acked = await js.publish_async(
            subject, body, stream=target.stream, headers={"Nats-Msg-Id": event_id, **headers}
        )
        await acked

    try:
        started = time.process_time()
        await _concurrently(send)
        return time.process_time() - started
    finally:
        await client.close()


async def _publish_redis(target: brokers.Destination, messages: list[_Message]) -> float:
    from redis.asyncio import Redis

    client = Redis(host="127.0.0.1", port=6379, max_connections=CONCURRENCY)
    try:
        started = time.process_time()
        for start in range(0, BACKLOG, PIPELINE):
            async with client.pipeline(transaction=False) as pipe:
                for event_id, body, headers in messages[start : start + PIPELINE]:
                    pipe.xadd(
                        target.key,
                        {"id": event_id, "type": "transfer.confirmed", "body": body, **headers},
                    )
                await pipe.execute()
        return time.process_time() - started
    finally:
        await client.aclose()


async def _publish_rabbitmq(target: brokers.Destination, messages: list[_Message]) -> float:
    import aio_pika

    connection = await aio_pika.connect("amqp://guest:guest@127.0.0.1:5672/")
    channel = await connection.channel(publisher_confirms=True, on_return_raises=True)
    exchange = await channel.get_exchange(target.exchange, ensure=False)

    async def send(number: int) -> None:
        event_id, body, headers = messages[number]
        message = aio_pika.Message(
            body,
            headers=dict(headers),
            content_type="application/json",
            delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
            message_id=event_id,
        )
        await exchange.publish(message, "transfer.confirmed", mandatory=True)

    try:
        started = time.process_time()
        await _concurrently(send)
        return time.process_time() - started
    finally:
        await connection.close()


PUBLISHERS = {"nats": _publish_nats, "redis": _publish_redis, "rabbitmq": _publish_rabbitmq}


def publish(kind: str) -> float:
    """CPU µs a message of the broker's client alone, messages built and signed beforehand."""
    secret = new_secret()
    messages: list[_Message] = []
    for number in range(BACKLOG):
        event_id, body, headers = brokers_bench._message(number, secret)
        messages.append((event_id, body.encode(), headers))
    with brokers.destination(kind) as target:
        used = asyncio.run(PUBLISHERS[kind](target, messages))
    return used * 1e6 / BACKLOG


def main() -> None:
    """Per broker and ledger: the floor, the ceiling it allows, and the bare loop beside it."""
    os.sched_setaffinity(0, {0})
    print(
        f"{BACKLOG} deliveries, concurrency {CONCURRENCY}, pinned to CPU 0, bare loop best of "
        f"{brokers_bench.ROUNDS}, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as workdir:
        ledgers = {db: ledger_and_signing(db, Path(workdir)) for db in brokers_bench.DATABASES}
        for db, (ledger, signed) in ledgers.items():
            print(f"{db}: ledger {ledger:.1f} µs, signing {signed:.1f} µs a delivery", flush=True)
        for kind in brokers_bench.KINDS:
            brokers.require(kind)
            client = publish(kind)
            bare = max(brokers_bench.bench_baseline(kind)[0] for _ in range(brokers_bench.ROUNDS))
            budget = 1e6 / (brokers_bench.TARGET * bare)
            for db, (ledger, signed) in ledgers.items():
                floor = ledger + signed + client
                print(
                    f"{kind} on {db}: floor {ledger:.1f} + {signed:.1f} + publish {client:.1f} = "
                    f"{floor:.1f} µs a delivery (at most {1e6 / floor:,.0f}/s on one core); bare "
                    f"loop {bare:,.0f}/s, so {brokers_bench.TARGET}× allows {budget:.1f} µs: "
                    f"{budget - floor:.1f} µs left for the rest of the worker; "
                    f"load average {os.getloadavg()[0]:.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
