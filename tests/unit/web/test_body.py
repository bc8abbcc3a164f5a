"""Reading a body with a limit, from a Request or a bare ASGI `receive`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from starlette.requests import ClientDisconnect

from web.body import BodyDeadline, check_declared, receive_limited
from web.errors import BodyTimeoutError, BodyTooLargeError


def _receiver(*messages: dict[str, Any]) -> tuple[Callable[[], Awaitable[Any]], list[int]]:
    calls = [0]
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        calls[0] += 1
        return queue.pop(0)

    return receive, calls


def _chunk(body: bytes, more: bool) -> dict[str, Any]:
    return {"type": "http.request", "body": body, "more_body": more}


def test_a_body_in_one_message_is_returned_as_is() -> None:
    """The usual delivery, one message with the whole body, comes back unchanged."""
    receive, _ = _receiver(_chunk(b'{"a": 1}', False))
    assert asyncio.run(receive_limited(receive, 100)) == b'{"a": 1}'


def test_chunks_are_joined_up_to_the_limit() -> None:
    """A body streamed in chunks is joined; exactly `limit` bytes is still accepted."""
    receive, _ = _receiver(_chunk(b"ab", True), _chunk(b"", True), _chunk(b"cd", False))
    assert asyncio.run(receive_limited(receive, 4)) == b"abcd"


def test_reading_stops_at_the_first_chunk_over_the_limit_and_keeps_the_head() -> None:
    """Nothing after the chunk that passes the limit is read; the first bytes are the evidence."""
    receive, calls = _receiver(_chunk(b"abc", True), _chunk(b"def", True), _chunk(b"g", False))
    with pytest.raises(BodyTooLargeError) as caught:
        asyncio.run(receive_limited(receive, 4))
    assert caught.value.head == b"abcd"
    assert calls[0] == 2


def test_a_single_message_over_the_limit_is_refused_with_its_head() -> None:
    """One oversized message is refused too, keeping `limit` bytes."""
    receive, _ = _receiver(_chunk(b"x" * 10, False))
    with pytest.raises(BodyTooLargeError) as caught:
        asyncio.run(receive_limited(receive, 4))
    assert caught.value.head == b"xxxx"


def test_a_disconnect_is_starlettes_client_disconnect() -> None:
    """A sender that goes away mid-body raises ClientDisconnect, as Request.stream does."""
    receive, _ = _receiver(_chunk(b"ab", True), {"type": "http.disconnect"})
    with pytest.raises(ClientDisconnect):
        asyncio.run(receive_limited(receive, 100))


@pytest.mark.parametrize(
    ("declared", "refused"), [(None, False), ("4", False), ("5", True), ("x", False)]
)
def test_a_declared_length_over_the_limit_is_refused_before_reading(
    declared: str | None, refused: bool
) -> None:
    """A Content-Length over the limit is refused at once; a missing or odd one is not."""
    if refused:
        with pytest.raises(BodyTooLargeError):
            check_declared(declared, 4)
    else:
        check_declared(declared, 4)


def _trickle(pieces: int, gap: float) -> Callable[[], Awaitable[Any]]:
    """A `receive` that hands out one byte every `gap` seconds, `pieces` times."""
    sent = [0]

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(gap)
        sent[0] += 1
        return _chunk(b"x", sent[0] < pieces)

    return receive


def test_a_body_that_arrives_in_time_is_read_through_the_deadline() -> None:
    """Reads that finish before the deadline return their body; the deadline stays quiet."""
    deadline = BodyDeadline(30)

    async def run() -> list[bytes]:
        return list(
            await asyncio.gather(*(deadline.receive(_trickle(3, 0), 100) for _ in range(5)))
        )

    assert asyncio.run(run()) == [b"xxx"] * 5


def test_a_body_still_trickling_at_the_deadline_is_a_timeout() -> None:
    """A read still waiting when the deadline passes raises BodyTimeoutError, others finish."""
    deadline = BodyDeadline(0.2)

    async def run() -> tuple[Any, ...]:
        slow = deadline.receive(_trickle(1000, 0.01), 10_000)
        fast = deadline.receive(_trickle(1, 0), 100)
        return tuple(await asyncio.gather(slow, fast, return_exceptions=True))

    slow, fast = asyncio.run(run())
    assert isinstance(slow, BodyTimeoutError)
    assert slow.status_code == 408
    assert fast == b"x"


def test_a_deadline_serves_reads_begun_later_and_on_a_new_loop() -> None:
    """Each read gets its own deadline, on whichever event loop it runs."""
    deadline = BodyDeadline(0.2)

    async def staggered() -> list[Any]:
        async def later(delay: float) -> bytes:
            await asyncio.sleep(delay)
            return await deadline.receive(_trickle(1000, 0.01), 10_000)

        return list(await asyncio.gather(later(0), later(0.1), return_exceptions=True))

    assert [type(r) for r in asyncio.run(staggered())] == [BodyTimeoutError] * 2
    assert [type(r) for r in asyncio.run(staggered())] == [BodyTimeoutError] * 2


def test_a_cancellation_from_elsewhere_is_not_turned_into_a_timeout() -> None:
    """A read cancelled by the server (shutting down) is cancelled, not answered 408."""
    deadline = BodyDeadline(30)

    async def run() -> None:
        task = asyncio.ensure_future(deadline.receive(_trickle(1000, 0.01), 10_000))
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(run())
