"""The Redis transport's pipeline (relay/transports/redis_streams.py): XADDs of one loop turn
sent together against the real Redis, each with its own answer."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from relay.transports.redis_streams import _Batched
from tests.support import brokers


def _key() -> str:
    return f"payrecon.test.pipeline.{uuid.uuid4().hex}"


def test_xadds_of_one_loop_turn_go_as_one_pipeline_each_with_its_own_answer() -> None:
    """Three XADDs started together are sent in one pipeline, in order; the one Redis refuses
    fails alone."""
    brokers.require("redis")
    stream, wrong = _key(), _key()

    async def main() -> tuple[list[object], list[tuple[bytes, dict[bytes, bytes]]], int]:
        client = Redis(host="127.0.0.1", port=6379)
        pipelines = 0
        made = client.pipeline

        def counted(*args: object, **kwargs: object) -> object:
            nonlocal pipelines
            pipelines += 1
            return made(*args, **kwargs)  # type: ignore[arg-type]

        client.pipeline = counted  # type: ignore[method-assign]
        try:
            await client.set(wrong, "not a stream")
            batched = _Batched(client)
            futures = [
                batched.xadd(stream, {"n": "1"}),
                batched.xadd(wrong, {"n": "2"}),
                batched.xadd(stream, {"n": "3"}),
            ]
            answers = await asyncio.gather(*futures, return_exceptions=True)
            entries = await client.xrange(stream)
            return answers, entries, pipelines
        finally:
            await client.delete(stream, wrong)
            await client.aclose()

    answers, entries, pipelines = asyncio.run(main())
    assert pipelines == 1
    assert isinstance(answers[1], ResponseError) and "WRONGTYPE" in str(answers[1])
    assert [entry_id for entry_id, _fields in entries] == [answers[0], answers[2]]
    assert [fields[b"n"] for _entry_id, fields in entries] == [b"1", b"3"]


def test_a_lost_connection_fails_every_xadd_of_the_batch() -> None:
    """With nothing listening, each waiting XADD gets the connection error; none hangs."""

    async def main() -> list[BaseException | object]:
        client = Redis(host="127.0.0.1", port=1, socket_connect_timeout=2)
        try:
            batched = _Batched(client)
            futures = [batched.xadd(_key(), {"n": str(n)}) for n in range(5)]
            return await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 10)
        finally:
            await client.aclose()

    answers = asyncio.run(main())
    assert len(answers) == 5
    assert all(isinstance(answer, RedisConnectionError) for answer in answers)


def test_an_attempt_that_gave_up_leaves_the_others_of_its_batch_answered() -> None:
    """A waiting XADD whose attempt timed out (its future cancelled) is skipped when the
    answers come; the rest of the batch still gets its entry ids."""
    brokers.require("redis")
    stream = _key()

    async def main() -> tuple[list[object], int]:
        client = Redis(host="127.0.0.1", port=6379)
        try:
            batched = _Batched(client)
            futures = [batched.xadd(stream, {"n": str(n)}) for n in range(4)]
            futures[1].cancel()
            answers = await asyncio.gather(*futures, return_exceptions=True)
            return answers, await client.xlen(stream)
        finally:
            await client.delete(stream)
            await client.aclose()

    answers, length = asyncio.run(main())
    assert isinstance(answers[1], asyncio.CancelledError)
    assert all(isinstance(answers[n], bytes) for n in (0, 2, 3))
    assert length == 4  # sent before it was cancelled: at least once, as after a timeout


@pytest.mark.parametrize("count", [1, 40])
def test_batches_keep_the_order_the_xadds_were_made_in(count: int) -> None:
    """However many XADDs wait, their entries are in the stream in the order they were made."""
    brokers.require("redis")
    stream = _key()

    async def main() -> list[bytes]:
        client = Redis(host="127.0.0.1", port=6379)
        try:
            batched = _Batched(client)
            await asyncio.gather(*(batched.xadd(stream, {"n": str(n)}) for n in range(count)))
            return [fields[b"n"] for _id, fields in await client.xrange(stream)]
        finally:
            await client.delete(stream)
            await client.aclose()

    assert asyncio.run(main()) == [str(n).encode() for n in range(count)]
