"""Idempotency under concurrency and across processes, and durability across kill -9."""

from __future__ import annotations

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, func, select

from ledger.db import create_db_engine, read_session
from ledger.models import Delivery, Transfer, WebhookEvent
from tests.support.processes import payrecon_env, serving, start_serve, stop
from tests.support.webhooks import encode, success_body

JSON = {"content-type": "application/json"}


def _fire(url: str, bodies: list[bytes], threads: int) -> list[str]:
    def post_all(chunk: list[bytes]) -> list[str]:
        with httpx.Client(timeout=30) as client:
            return [
                client.post(f"{url}/webhook", content=b, headers=JSON).json()["outcome"]
                for b in chunk
            ]

    chunks = [bodies[i::threads] for i in range(threads)]
    with ThreadPoolExecutor(threads) as pool:
        return [o for result in pool.map(post_all, chunks) for o in result]


def test_concurrent_duplicates_apply_once(start_receiver, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    """1,000 deliveries with 30% duplicates from 16 threads: one event each, exact counts."""
    rng = random.Random(7)
    unique = [encode(success_body(f"C{i:04d}")) for i in range(700)]
    repeats = [rng.choice(unique) for _ in range(300)]
    bodies = unique + repeats
    rng.shuffle(bodies)
    with start_receiver() as url:
        outcomes = _fire(url, bodies, threads=16)
    assert outcomes.count("accepted") == 700
    assert outcomes.count("duplicate") == 300
    expected_copies: dict[str, int] = {}
    for body in bodies:
        reference = json.loads(body)["data"]["merchant_reference"]
        expected_copies[reference] = expected_copies.get(reference, 0) + 1
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(WebhookEvent)).scalar_one() == 700
        counts = dict(
            session.execute(
                select(Transfer.reference, func.count(Delivery.id))  # type: ignore[call-overload]
                .join(Delivery, Delivery.transfer_id == Transfer.id)
                .group_by(Transfer.reference)
            ).all()
        )
    assert counts == expected_copies


@pytest.mark.postgres
def test_two_receiver_processes_on_one_database_apply_each_event_once(
    postgres_url: str, tmp_path: Path
) -> None:
    """The same events sent to two receiver processes sharing PostgreSQL are applied once."""
    env = payrecon_env(database_url=postgres_url)
    bodies = [encode(success_body(f"P{i:03d}")) for i in range(300)]
    with (
        serving(env, log=tmp_path / "a.log") as first,
        serving(env, log=tmp_path / "b.log") as second,
    ):
        results: dict[str, list[str]] = {}

        def run(name: str, url: str) -> None:
            results[name] = _fire(url, bodies, threads=8)

        workers = [
            threading.Thread(target=run, args=(n, u)) for n, u in (("a", first), ("b", second))
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=120)
    outcomes = results["a"] + results["b"]
    assert outcomes.count("accepted") == 300
    assert outcomes.count("duplicate") == 300
    engine = create_db_engine(postgres_url)
    try:
        with read_session(engine) as session:
            assert (
                session.execute(select(func.count()).select_from(WebhookEvent)).scalar_one() == 300
            )
            assert session.execute(select(func.count()).select_from(Transfer)).scalar_one() == 300
            assert session.execute(select(func.count()).select_from(Delivery)).scalar_one() == 600
    finally:
        engine.dispose()


def test_kill_9_during_load_loses_no_acknowledged_delivery(
    database_url: str, tmp_path: Path
) -> None:
    """Kill the server twice mid-load and restart it: every 2xx-acknowledged event is stored."""
    env = payrecon_env(database_url=database_url)
    total = 5000
    acked: set[str] = set()
    lock = threading.Lock()
    next_index = iter(range(total))
    index_lock = threading.Lock()
    process, port = start_serve(env, log=tmp_path / "serve.log")
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240

    def worker() -> None:
        with httpx.Client(timeout=10) as client:
            while time.monotonic() < deadline:
                with index_lock:
                    i = next(next_index, None)
                if i is None:
                    return
                body = encode(success_body(f"K{i:05d}"))
                for _ in range(100):  # retry like the provider does, bounded
                    try:
                        response = client.post(f"{url}/webhook", content=body, headers=JSON)
                    except httpx.TransportError:
                        time.sleep(0.05)
                        continue
                    if response.status_code == 200:
                        with lock:
                            acked.add(f"K{i:05d}")
                        break
                    time.sleep(0.05)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        for kill_at in (total // 3, 2 * total // 3):
            while len(acked) < kill_at and time.monotonic() < deadline:
                time.sleep(0.01)
            stop(process, kill=True)
            process, _ = start_serve(env, port=port, log=tmp_path / "serve.log")
        for thread in threads:
            thread.join(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        stop(process)
    assert len(acked) == total
    engine = create_db_engine(database_url)
    try:
        with read_session(engine) as session:
            stored = set(session.execute(select(WebhookEvent.reference)).scalars())
    finally:
        engine.dispose()
    assert acked <= stored
