"""Relay throughput to each message broker against a bare loop of the same client library.

Per broker (RabbitMQ, NATS JetStream, Redis Streams) and per ledger (SQLite, PostgreSQL): first
the baseline — a bare loop of the broker's own client (aio-pika with publisher confirms,
nats-py awaiting the JetStream ack, redis-py XADD) publishing BACKLOG Standard-Webhooks-signed
messages at the worker's concurrency — then `payrecon relay run` draining a backlog of BACKLOG
events to an endpoint on the same broker. Both senders run pinned to CPU 0 (`taskset`); the
broker's server is left where the scheduler puts it (pinning it to the other CPU slowed the
bare loop by ~30 % and not the relay, which would flatter the ratio). The rate is taken at the
broker, by polling its message count: first message to last. Each side runs
BENCH_BROKERS_ROUNDS times (3), alternating, and the best rate of each is compared: on a shared
VM a single pair swung by up to 1.6x (bench/RESULTS.md section 19). Figures are printed, every
round's too, with the load average, and the CPU a message of the best round of each side (the
bare loop's over its sends, the worker's over the drain).

    .venv/bin/python bench/bench_brokers.py            # BENCH_BROKERS_BACKLOG=1000 to try

BENCH_BROKERS=nats,redis and BENCH_BROKERS_DBS=sqlite narrow it to some brokers and ledgers;
BENCH_BROKERS_PIN= (empty) runs both senders unpinned, to compare (bench/RESULTS.md section 21).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ledger.db import create_db_engine  # noqa: E402
from ledger.migrate import upgrade  # noqa: E402
from relay import signing  # noqa: E402
from relay.keys import new_secret  # noqa: E402
from tests.support import brokers  # noqa: E402
from tests.support import relay as support  # noqa: E402

BACKLOG = int(os.environ.get("BENCH_BROKERS_BACKLOG", "10000"))
CONCURRENCY = int(os.environ.get("BENCH_RELAY_CONCURRENCY", "16"))
TARGET = 0.7  # share of the bare loop (issue 27)
PG_ADMIN = os.environ.get("PAYRECON_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
KINDS = [k for k in os.environ.get("BENCH_BROKERS", "rabbitmq,nats,redis").split(",") if k]
ROUNDS = max(1, int(os.environ.get("BENCH_BROKERS_ROUNDS", "3")))
DATABASES = [d for d in os.environ.get("BENCH_BROKERS_DBS", "sqlite,postgresql").split(",") if d]
# The CPUs both senders are pinned to (`taskset -c`); empty: not pinned (for comparison only).
PIN = os.environ.get("BENCH_BROKERS_PIN", "0")
PINNED = ["taskset", "-c", PIN] if PIN else []


async def _count(target: brokers.Destination) -> int:
    if target.kind == "rabbitmq":
        async with brokers._rabbit() as channel:
            queue = await channel.declare_queue(target.queue, durable=True, passive=True)
            return int(queue.declaration_result.message_count or 0)
    if target.kind == "nats":
        async with brokers._nats() as (_client, js):
            return int((await js.stream_info(target.stream)).state.messages)
    async with brokers._redis() as client:
        return int(await client.xlen(target.key))


async def _watch(
    target: brokers.Destination,
    total: int,
    limit: float = 900,
    on_first: Callable[[int], object] = lambda count: None,
) -> float:
    """Messages per second at the destination, first to last (polled every 20 ms);
    `on_first(count)` is called when the first messages are seen."""
    first = last = None
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        count = await _count(target)
        now = time.monotonic()
        if count >= 1 and first is None:
            first = now
            on_first(count)
        if count >= total:
            last = now
            break
        await asyncio.sleep(0.02)
    if first is None or last is None:
        raise TimeoutError(f"{target.kind}: {await _count(target)} of {total} in {limit:g} s")
    return (total - 1) / max(last - first, 1e-9)


# The bare loop --------------------------------------------------------------------------------


def _message(number: int, secret: str) -> tuple[str, str, dict[str, str]]:
    event_id = f"evt_{number:026d}"
    body = (
        f'{{"id":"{event_id}","type":"transfer.confirmed","sequence":1,'
        f'"data":{{"reference":"B-{number}"}}}}'
    )
    return event_id, body, signing.headers([secret], event_id, int(time.time()), body)


async def _baseline_loop(kind: str, tag: str) -> None:
    target = brokers.Destination(kind, tag=tag)
    secret = new_secret()
    numbers = iter(range(BACKLOG))
    if kind == "rabbitmq":
        import aio_pika

        connection = await aio_pika.connect("amqp://guest:guest@127.0.0.1:5672/")
        channel = await connection.channel(publisher_confirms=True, on_return_raises=True)
        exchange = await channel.get_exchange(target.exchange, ensure=False)

        async def publish(event_id: str, body: str, headers: dict[str, str]) -> None:
            message = aio_pika.Message(
                body.encode(),
                headers=dict(headers),
                content_type="application/json",
                delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                message_id=event_id,
            )
            await exchange.publish(message, "transfer.confirmed", mandatory=True)

        close = connection.close
    elif kind == "nats":
        import nats

        client = await nats.connect("nats://127.0.0.1:4222")
        js = client.jetstream()

        async def publish(event_id: str, body: str, headers: dict[str, str]) -> None:
            await js.publish(
                f"t{tag}.transfer.confirmed",
                body.encode(),
                stream=target.stream,
                headers={"Nats-Msg-Id": event_id, **headers},
            )

        close = client.close
    else:
        from redis.asyncio import Redis

        redis = Redis(host="127.0.0.1", port=6379, max_connections=CONCURRENCY)

        async def publish(event_id: str, body: str, headers: dict[str, str]) -> None:
            fields = {"id": event_id, "type": "transfer.confirmed", "body": body, **headers}
            await redis.xadd(target.key, fields)  # type: ignore[arg-type]

        close = redis.aclose

    async def sender() -> None:
        # `concurrency` loops share one iterator: the bare form of the worker's bound.
        for number in numbers:
            await publish(*_message(number, secret))

    try:
        cpu = time.process_time()
        await asyncio.gather(*(sender() for _ in range(CONCURRENCY)))
        # The loop's CPU a message (connecting left out), for the parent to print.
        print(f"cpu {(time.process_time() - cpu) * 1000 / BACKLOG:.4f}", flush=True)
    finally:
        await close()


def bench_baseline(kind: str) -> tuple[float, float]:
    """BACKLOG signed publishes by the bare loop pinned to CPU 0; messages per second, and the
    loop's CPU milliseconds a message."""
    with brokers.destination(kind) as target:
        loop = subprocess.Popen(
            [*PINNED, sys.executable, __file__, "--baseline", kind, target.tag],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            rate = asyncio.run(_watch(target, BACKLOG))
        finally:
            said, _ = loop.communicate(timeout=600)
    cpu_ms = float(said.split()[-1]) if said.startswith("cpu ") else float("nan")
    return rate, cpu_ms


# The relay ------------------------------------------------------------------------------------


def _database(db: str, workdir: Path) -> str:
    if db == "sqlite":
        url = f"sqlite:///{workdir}/brokers-bench-{time.monotonic_ns()}.db"
    else:
        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute("DROP DATABASE IF EXISTS payrecon_bench_brokers")
            conn.execute("CREATE DATABASE payrecon_bench_brokers")
        url = (
            PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
            + "/payrecon_bench_brokers"
        )
    upgrade(url)
    return url


def bench_relay(kind: str, db: str, workdir: Path) -> tuple[float, float]:
    """`relay run` on a backlog of BACKLOG events to the broker; messages per second, and the
    worker's CPU milliseconds per delivery over the drain (start-up not counted)."""
    url = _database(db, workdir)
    engine = create_db_engine(url)
    with brokers.destination(kind) as target:
        support.add_endpoint(engine, target.url())
        support.emit_backlog(engine, BACKLOG)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PAYRECON_")}
        env.update(
            PAYRECON_DATABASE_URL=url,
            PAYRECON_RELAY_KEYS=support.RELAY_KEYS,
            PAYRECON_RELAY_CONCURRENCY=str(CONCURRENCY),
            PAYRECON_RELAY_ALLOW_NETWORKS="127.0.0.0/8",
        )
        worker = subprocess.Popen(
            [*PINNED, sys.executable, "-m", "payrecon", "relay", "run"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # The worker's CPU over the drain: from the first messages seen at the broker to the
        # last (its start-up, imports and connections, left out).
        seen: list[tuple[float, int]] = []

        def first(count: int) -> None:
            seen.append((_cpu(worker.pid), count))

        try:
            rate = asyncio.run(_watch(target, BACKLOG, on_first=first))
            started, count = seen[0]
            cpu_ms = (_cpu(worker.pid) - started) * 1000 / max(1, BACKLOG - count)
        finally:
            worker.terminate()
            worker.wait(timeout=60)
            engine.dispose()
    return rate, cpu_ms


def _cpu(pid: int) -> float:
    """Seconds of CPU (user + system) the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    """Per broker and ledger: ROUNDS of the bare loop then the relay; print the figures."""
    print(
        f"{BACKLOG} events, concurrency {CONCURRENCY}, best of {ROUNDS} rounds, "
        f"senders {'pinned to CPU ' + PIN if PIN else 'not pinned'}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory() as workdir:
        for kind in KINDS:
            brokers.require(kind)
            for db in DATABASES:
                # The baseline beside each run: the shared VM's speed drifts within minutes.
                baselines: list[tuple[float, float]] = []
                rates: list[tuple[float, float]] = []
                for _ in range(ROUNDS):
                    baselines.append(bench_baseline(kind))
                    rates.append(bench_relay(kind, db, Path(workdir)))
                rounds = ", ".join(
                    f"{b:,.0f}/{r:,.0f}" for (b, _), (r, _) in zip(baselines, rates, strict=True)
                )
                (baseline, bare_ms), (rate, cpu_ms) = max(baselines), max(rates)
                verdict = "ok" if rate >= TARGET * baseline else "MISS"
                print(
                    f"{kind} on {db}: bare loop {baseline:,.0f}/s; relay run {rate:,.0f}/s = "
                    f"{rate / baseline:.2f}× (target ≥ {TARGET}) — {verdict}; CPU a message: "
                    f"bare loop {bare_ms:.3f} ms, worker {cpu_ms:.3f} ms; "
                    f"rounds (bare/relay) {rounds}; "
                    f"load average {os.getloadavg()[0]:.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--baseline":
        asyncio.run(_baseline_loop(sys.argv[2], sys.argv[3]))
    else:
        main()
