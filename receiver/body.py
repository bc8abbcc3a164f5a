"""Read a request body with a limit counted while streaming, never after reading it all."""

from __future__ import annotations

from starlette.requests import Request

from receiver.errors import BodyTooLargeError


async def read_limited(request: Request, limit: int) -> bytes:
    """The body, or BodyTooLargeError as soon as more than `limit` bytes have arrived."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(f"body of {declared} bytes is over the {limit}-byte limit")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        chunks.append(chunk)
        if size > limit:
            # Stop reading at once; keep the first `limit` bytes as evidence.
            raise BodyTooLargeError(
                f"body is over the {limit}-byte limit", head=b"".join(chunks)[:limit]
            )
    return b"".join(chunks)
