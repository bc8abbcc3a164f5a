"""A fixed webhook workload through the receiver's ASGI app in-process: CPU per delivery, a
figure the machine's load does not swing the way requests per second swing.

`python bench/receiver_cpu.py N` (PYTHONPATH = the tree measured; PAYRECON_DATABASE_URL a
migrated, empty ledger) serves N unique `transfer.success` webhooks (the orphan-heavy load of
bench/unique_events.lua), 64 at a time as wrk -c64 keeps them, through `create_app` with its
lifespan (the group-commit writer runs), and prints the process's CPU seconds for them (every
thread: the commit threads and, tracing on, the export thread). With OTEL_EXPORTER_OTLP_ENDPOINT
set the app is wrapped and traced as `serve` does; with BENCH_TRACEPARENT=1 every webhook
carries a sender's `traceparent` (each a new trace), which the batch span links to. Under
`valgrind --tool=callgrind`, run it for N and 2N and take the difference: the instructions of
N deliveries, start-up cancelled out (bench/bench_receiver.py --cpu does both).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from typing import Any

CONCURRENCY = 64


def _body(number: int) -> bytes:
    reference = f"C{os.getpid()}-{number}"
    data = {
        "reference": reference,
        "merchant_reference": "m" + reference,
        "amount": 100000,
        "status": "successful",
        "fee": 1000,
    }
    return json.dumps({"event": "transfer.success", "data": data}).encode()


def _sender_trace() -> list[tuple[bytes, bytes]]:
    if not os.environ.get("BENCH_TRACEPARENT"):
        return []
    trace_id, span_id = os.urandom(16).hex(), os.urandom(8).hex()
    return [(b"traceparent", f"00-{trace_id}-{span_id}-01".encode())]


async def _request(app: Any, body: bytes) -> int:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/webhook",
        "raw_path": b"/webhook",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *_sender_trace(),
        ],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def _lifespan(app: Any) -> tuple[asyncio.Queue[dict[str, Any]], asyncio.Task[None]]:
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    task = asyncio.create_task(
        app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, outbox.put)
    )
    started = await outbox.get()
    assert started["type"] == "lifespan.startup.complete", started
    return inbox, task


async def main(count: int) -> None:
    from payrecon.app import create_app
    from payrecon.logconfig import configure_logging
    from payrecon.settings import Settings

    configure_logging(json=True)
    logging.getLogger().setLevel(logging.INFO)
    app: Any = create_app(Settings(_env_file=None))
    traced = False
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from telemetry.asgi import TracedRequests
        from telemetry.tracing import configure_tracing

        traced = configure_tracing("payrecon-serve")
        try:  # as `serve` wraps it: the webhook's span is its batch's (trees before: every request)
            from receiver.fastpath import is_webhook

            app = TracedRequests(app, untraced=is_webhook)
        except ImportError:
            app = TracedRequests(app)
    inbox, task = await _lifespan(app)
    bodies = [_body(n) for n in range(count)]
    statuses: list[int] = []
    cpu, wall = time.process_time(), time.perf_counter()
    for start in range(0, count, CONCURRENCY):
        chunk = bodies[start : start + CONCURRENCY]
        statuses += await asyncio.gather(*(_request(app, body) for body in chunk))
    if traced:
        from telemetry.tracing import shutdown_tracing

        shutdown_tracing()  # the export of what is buffered belongs to the workload
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await inbox.put({"type": "lifespan.shutdown"})
    await task
    bad = sum(status != 200 for status in statuses)
    print(json.dumps({"count": count, "cpu_s": cpu, "wall_s": wall, "non_200": bad}))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
