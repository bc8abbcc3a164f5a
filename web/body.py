"""Read a request body with a limit counted while streaming, never after reading it all, and a
deadline for the whole body to arrive (PAYRECON_BODY_TIMEOUT, on every route: docs/rules.md
Robustness rules)."""

from __future__ import annotations

import asyncio

from starlette.requests import ClientDisconnect, Request
from starlette.types import Receive

from web.errors import BodyTimeoutError, BodyTooLargeError

# Seconds a body may take to arrive when the app was given no PAYRECON_BODY_TIMEOUT.
DEFAULT_BODY_TIMEOUT = 10.0


def check_declared(declared: str | None, limit: int) -> None:
    """BodyTooLargeError when a Content-Length already says the body is over `limit`."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(f"body of {declared} bytes is over the {limit}-byte limit")


def _too_large(chunks: list[bytes], limit: int) -> BodyTooLargeError:
    # Stop reading at once; keep the first `limit` bytes as evidence.
    return BodyTooLargeError(f"body is over the {limit}-byte limit", head=b"".join(chunks)[:limit])


async def read_body(request: Request, limit: int) -> bytes:
    """The body, BodyTooLargeError as soon as more than `limit` bytes have arrived, or
    BodyTimeoutError when it has not all arrived within the app's deadline.

    The deadline is the app's `state.body_deadline` (one per app, built by the composition
    root from PAYRECON_BODY_TIMEOUT); an app without one gets one of DEFAULT_BODY_TIMEOUT.
    """
    check_declared(request.headers.get("content-length"), limit)
    return await body_deadline(request).receive(request.receive, limit)


def body_deadline(request: Request) -> BodyDeadline:
    """The app's BodyDeadline, made on first use when the app was built without one."""
    state = request.app.state
    deadline: BodyDeadline | None = getattr(state, "body_deadline", None)
    if deadline is None:
        deadline = state.body_deadline = BodyDeadline(DEFAULT_BODY_TIMEOUT)
    return deadline


async def receive_limited(receive: Receive, limit: int) -> bytes:
    """`read_limited` on a bare ASGI `receive` (the caller checks Content-Length first).

    Raises Starlette's ClientDisconnect when the sender goes away, as `Request.stream` does.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        if message["type"] != "http.request":
            continue
        chunk: bytes = message.get("body", b"")
        more = message.get("more_body", False)
        if not more and not chunks:
            # The usual delivery: the whole body in one message, nothing to join.
            if len(chunk) > limit:
                raise _too_large([chunk], limit)
            return chunk
        size += len(chunk)
        chunks.append(chunk)
        if size > limit:
            raise _too_large(chunks, limit)
        if not more:
            return b"".join(chunks)


class BodyDeadline:
    """Cancels body reads still unfinished `timeout` seconds after they began (408).

    Every read gets the same timeout, so deadlines fall in the order reads begin: one timer,
    armed for the oldest read, serves them all. A timer per request (`asyncio.timeout`) would
    cost more than the read itself on the webhook's hot path.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        # The reads in progress, oldest first, with their deadlines (loop time).
        self._reads: dict[asyncio.Task[object], float] = {}
        self._expired: set[asyncio.Task[object]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def receive(self, receive: Receive, limit: int) -> bytes:
        """`receive_limited`, or BodyTimeoutError once the deadline has passed."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None:  # pragma: no cover - always called from a task
            return await receive_limited(receive, limit)
        deadline = loop.time() + self.timeout
        self._reads[task] = deadline
        if self._timer is None or self._loop is not loop:
            self._loop = loop
            self._timer = loop.call_at(deadline, self._expire)
        try:
            return await receive_limited(receive, limit)
        except asyncio.CancelledError:
            if task not in self._expired:
                raise  # the server is stopping, or the sender went away
            task.uncancel()
            raise BodyTimeoutError(
                f"the body did not arrive within {self.timeout:g} seconds"
            ) from None
        finally:
            self._reads.pop(task, None)
            self._expired.discard(task)

    def _expire(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        self._timer = None
        late = []
        for task, deadline in self._reads.items():
            if deadline > now:
                self._timer = self._loop.call_at(deadline, self._expire)
                break
            late.append(task)
        for task in late:
            del self._reads[task]
            self._expired.add(task)
            task.cancel()
