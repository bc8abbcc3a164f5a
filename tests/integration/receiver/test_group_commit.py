"""The group-commit writer: how deliveries that arrive close together are cut into batches."""

from __future__ import annotations

import asyncio
import hashlib

from sqlalchemy import Engine, func, select

from ledger.db import read_session
from ledger.models import Delivery, WebhookEvent
from ledger.types import DeliveryOutcome, utcnow
from receiver.apply import Applied, IncomingDelivery
from receiver.events import parse_event
from receiver.ingest import GroupCommitWriter
from tests.support.webhooks import encode, success_body


def _delivery(reference: str) -> IncomingDelivery:
    raw = encode(success_body(reference))
    delivery = IncomingDelivery(
        utcnow(), "127.0.0.1", {}, raw, hashlib.sha256(raw).hexdigest(), len(raw)
    )
    delivery.parsed = parse_event(raw)
    return delivery


def _staggered(
    engine: Engine, count: int, *, same: bool = False, **options: float
) -> tuple[list[int], list[Applied]]:
    """Submit `count` deliveries, the i-th after i loop iterations (all one event when `same`);
    return the batch sizes and the results."""
    sizes: list[int] = []

    async def run() -> list[Applied]:
        writer = GroupCommitWriter(
            engine, on_batch=lambda size, _seconds: sizes.append(size), **options
        )
        await writer.start()

        async def submit(i: int) -> Applied:
            for _ in range(i):
                await asyncio.sleep(0)
            return await writer.submit(_delivery("GC-same" if same else f"GC-{i}"))

        try:
            return await asyncio.gather(*(submit(i) for i in range(count)))
        finally:
            await writer.stop()

    return sizes, asyncio.run(run())


def test_deliveries_arriving_over_several_loop_turns_share_one_commit(engine: Engine) -> None:
    """Deliveries that reach the queue a few loop iterations apart are committed as one batch."""
    sizes, results = _staggered(engine, 12, linger=5.0)
    assert sizes == [12]
    assert [r.outcome for r in results] == [DeliveryOutcome.ACCEPTED] * 12
    with read_session(engine) as session:
        assert session.scalar(select(func.count()).select_from(Delivery)) == 12


def test_without_linger_a_batch_is_cut_at_once(engine: Engine) -> None:
    """With no linger the writer takes only what is already queued, so the same load splits."""
    sizes, results = _staggered(engine, 12, linger=0.0)
    assert len(sizes) > 1 and sum(sizes) == 12
    assert all(r.outcome is DeliveryOutcome.ACCEPTED for r in results)


def test_a_batch_never_exceeds_batch_max(engine: Engine) -> None:
    """Lingering stops once batch_max deliveries are waiting."""
    sizes, _ = _staggered(engine, 10, linger=5.0, batch_max=4)
    assert sum(sizes) == 10 and max(sizes) <= 4


def test_two_transactions_share_the_queue_and_both_commit(engine: Engine) -> None:
    """With a second transaction free, what is queued is split in two batches, both committed."""
    sizes, results = _staggered(engine, 12, linger=5.0, transactions=2)
    assert sorted(sizes) == [6, 6]
    assert all(r.outcome is DeliveryOutcome.ACCEPTED for r in results)
    with read_session(engine) as session:
        assert session.scalar(select(func.count()).select_from(Delivery)) == 12


def test_one_event_split_across_concurrent_transactions_is_applied_once(engine: Engine) -> None:
    """Copies of one event in two concurrent batches: one accepted, the rest duplicates."""
    _, results = _staggered(engine, 12, same=True, linger=5.0, transactions=2)
    outcomes = sorted(r.outcome.value for r in results)
    assert outcomes == ["accepted"] + ["duplicate"] * 11
    with read_session(engine) as session:
        assert session.scalar(select(func.count()).select_from(WebhookEvent)) == 1
        assert session.scalar(select(func.count()).select_from(Delivery)) == 12
