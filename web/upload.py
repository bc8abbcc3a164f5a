"""An uploaded file streamed to disk: the raw body, or the one named part of a
`multipart/form-data` body, with its size limit counted while it arrives (413 at once, never
after reading it all) and a deadline that grows with what has arrived (docs/rules.md
Robustness rules: a body has a deadline; a big file is not a reason to hold a connection for
ever, nor to refuse an honest sender on a slow line).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from starlette.requests import ClientDisconnect, Request

from web.body import body_deadline, check_declared
from web.errors import BodyTimeoutError, BodyTooLargeError, WebError

# Each this many bytes received earns the upload one more body timeout (PAYRECON_BODY_TIMEOUT):
# 16 MB in 10 seconds by default, so a 200 MB file may take two minutes and no more.
BYTES_PER_TIMEOUT = 16 * 1024 * 1024
# What multipart framing (boundaries, part headers, other small fields) may add to the file.
MULTIPART_SLACK = 64 * 1024
_MAX_PART_HEADERS = 16 * 1024
_BOUNDARY = re.compile(r'boundary="?([^";]{1,70})"?', re.IGNORECASE)
_NAME = re.compile(rb'\bname="([^"]*)"', re.IGNORECASE)
_FILENAME = re.compile(rb'\bfilename="([^"]*)"', re.IGNORECASE)


@dataclass(frozen=True)
class Upload:
    """The file received: where it is on disk, its size, and the name the sender gave."""

    path: Path
    size: int
    filename: str | None


async def receive_file(request: Request, path: Path, limit: int) -> int:
    """Write the request's body to `path`; its size. BodyTooLargeError as soon as more than
    `limit` bytes have arrived (or a Content-Length says so), BodyTimeoutError when the body
    arrives slower than BYTES_PER_TIMEOUT per body timeout."""
    check_declared(request.headers.get("content-length"), limit)
    timeout = body_deadline(request).timeout
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    size = 0
    with path.open("wb") as out:
        while True:
            left = deadline + timeout * (size // BYTES_PER_TIMEOUT) - loop.time()
            if left <= 0:
                raise BodyTimeoutError(f"the body did not arrive in time ({size} bytes read)")
            try:
                message = await asyncio.wait_for(request.receive(), left)
            except TimeoutError:
                raise BodyTimeoutError(
                    f"the body did not arrive in time ({size} bytes read)"
                ) from None
            if message["type"] == "http.disconnect":
                raise ClientDisconnect()
            if message["type"] != "http.request":
                continue
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BodyTooLargeError(f"body is over the {limit}-byte limit")
            out.write(chunk)
            if not message.get("more_body", False):
                return size


def boundary_of(content_type: str) -> str:
    """The boundary of a `multipart/form-data` Content-Type; WebError without one."""
    found = _BOUNDARY.search(content_type)
    if found is None:
        raise WebError("multipart/form-data needs a boundary")
    return found.group(1)


def extract_part(source: Path, target: Path, boundary: str, name: str, limit: int) -> Upload:
    """Copy the part called `name` of the multipart body in `source` to `target`, streaming
    (memory stays flat whatever the file's size). WebError for a body that is not
    well-formed multipart or has no such part; BodyTooLargeError for a part over `limit`."""
    delimiter = b"\r\n--" + boundary.encode("latin-1")
    with source.open("rb") as body, target.open("wb") as out:
        reader = _Reader(body)
        first = reader.read_until(b"--" + boundary.encode("latin-1"), sink=None, limit=1 << 16)
        if first is None:
            raise WebError("the multipart body has no opening boundary")
        while True:
            tail = reader.take(2)
            if tail == b"--":
                break  # the closing boundary: no part called `name`
            if tail != b"\r\n":
                raise WebError("a multipart boundary is not followed by a line break")
            headers = reader.read_until(b"\r\n\r\n", sink=None, limit=_MAX_PART_HEADERS)
            if headers is None:
                raise WebError("a multipart part's headers do not end")
            disposition = next(
                (
                    line
                    for line in headers.split(b"\r\n")
                    if line.lower().startswith(b"content-disposition:")
                ),
                b"",
            )
            part_name = _NAME.search(disposition)
            wanted = part_name is not None and part_name.group(1) == name.encode()
            sink = out if wanted else None
            size = reader.copy_until(delimiter, sink=sink, limit=limit if wanted else None)
            if size is None:
                raise WebError("a multipart part does not end with its boundary")
            if wanted:
                filename = _FILENAME.search(disposition)
                shown = None if filename is None else filename.group(1).decode("utf-8", "replace")
                return Upload(target, size, shown)
    raise WebError(f"the multipart body has no part named {name!r}")


class _Reader:
    """A binary file read in chunks with a small look-ahead buffer."""

    CHUNK = 1 << 20

    def __init__(self, file: BinaryIO) -> None:
        self.file = file
        self.buffer = b""

    def _fill(self) -> bool:
        more = self.file.read(self.CHUNK)
        self.buffer += more
        return bool(more)

    def take(self, count: int) -> bytes:
        while len(self.buffer) < count and self._fill():
            pass
        taken, self.buffer = self.buffer[:count], self.buffer[count:]
        return taken

    def read_until(self, marker: bytes, *, sink: None, limit: int) -> bytes | None:
        """The bytes before `marker` (consumed with it); None when it does not come within
        `limit` bytes."""
        while True:
            at = self.buffer.find(marker)
            if at >= 0:
                found, self.buffer = self.buffer[:at], self.buffer[at + len(marker) :]
                return found
            if len(self.buffer) > limit + len(marker) or not self._fill():
                return None

    def copy_until(self, marker: bytes, *, sink: BinaryIO | None, limit: int | None) -> int | None:
        """Copy the bytes before `marker` to `sink` (consuming the marker); their count, or
        None when the file ends first. BodyTooLargeError past `limit`."""
        copied = 0
        while True:
            at = self.buffer.find(marker)
            if at >= 0:
                piece, self.buffer = self.buffer[:at], self.buffer[at + len(marker) :]
                copied += len(piece)
                if limit is not None and copied > limit:
                    raise BodyTooLargeError(f"the file is over the {limit}-byte limit")
                if sink is not None:
                    sink.write(piece)
                return copied
            # Keep what could be the start of the marker; pass the rest on.
            keep = len(marker) - 1
            if len(self.buffer) > keep:
                piece, self.buffer = self.buffer[:-keep], self.buffer[-keep:]
                copied += len(piece)
                if limit is not None and copied > limit:
                    raise BodyTooLargeError(f"the file is over the {limit}-byte limit")
                if sink is not None:
                    sink.write(piece)
            if not self._fill():
                return None
