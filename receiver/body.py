"""Read a request body with a limit counted while streaming, never after reading it all."""

from __future__ import annotations

from starlette.requests import ClientDisconnect, Request
from starlette.types import Receive

from receiver.errors import BodyTooLargeError


def check_declared(declared: str | None, limit: int) -> None:
    """BodyTooLargeError when a Content-Length already says the body is over `limit`."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(f"body of {declared} bytes is over the {limit}-byte limit")


def _too_large(chunks: list[bytes], limit: int) -> BodyTooLargeError:
    # Stop reading at once; keep the first `limit` bytes as evidence.
    return BodyTooLargeError(f"body is over the {limit}-byte limit", head=b"".join(chunks)[:limit])


async def read_limited(request: Request, limit: int) -> bytes:
    """The body, or BodyTooLargeError as soon as more than `limit` bytes have arrived."""
    check_declared(request.headers.get("content-length"), limit)
    return await receive_limited(request.receive, limit)


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
