"""An upload read as it streams: a raw body, or a `multipart/form-data` form, written to disk
with every limit counted while the bytes arrive (413 at once, never after reading it all), and
a deadline that grows with what has arrived, bounded by the size limit (docs/rules.md
Robustness rules: a body has a deadline; a big file is not a reason to hold a connection for
ever, nor to refuse an honest sender on a slow line).

A form keeps its small text fields in memory (a bounded total, a bounded number of parts) and
writes its one file part to disk; `first_field` reads a form's first field alone (the CSRF
token, placed first) without reading the rest."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from starlette.requests import ClientDisconnect, Request
from starlette.types import Message

from web.body import body_deadline, check_declared
from web.errors import BodyTimeoutError, BodyTooLargeError, MalformedFormError

MULTIPART = "multipart/form-data"
# Each this many bytes received earns the upload one more body timeout (PAYRECON_BODY_TIMEOUT):
# 16 MB in 10 seconds by default, so a 200 MB file may take two minutes and no more.
BYTES_PER_TIMEOUT = 16 * 1024 * 1024
MAX_FIELDS_BYTES = 64 * 1024
MAX_HEADER_BYTES = 4 * 1024
MAX_PARTS = 32
# What a form may add to its file: its text fields, and the framing of every part (the
# preamble, boundaries and part headers) with room for a short epilogue.
MULTIPART_SLACK = MAX_FIELDS_BYTES + (MAX_PARTS + 2) * (MAX_HEADER_BYTES + 128)
ANY_FILE = "*"  # as `file_field`: every part with a file name is the file
_BOUNDARY = re.compile(r"""boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))""", re.IGNORECASE)
_PARAM = re.compile(r"""\b(name|filename)="([^"]*)\"""", re.IGNORECASE)

Receive = Callable[[], Awaitable[Message]]


def allowance(timeout: float, received: int) -> float:
    """Seconds a body may take, counted from its start, once `received` bytes have arrived:
    one timeout, and one more for each BYTES_PER_TIMEOUT (bounded, as `received` is by the
    caller's limit)."""
    return timeout * (1 + received // BYTES_PER_TIMEOUT)


async def _stream(request: Request, limit: int, write: Callable[[bytes], object]) -> int:
    """Pass the request's body to `write` chunk by chunk; its size. BodyTooLargeError as soon
    as more than `limit` bytes have arrived (or a Content-Length says so), BodyTimeoutError
    when it arrives slower than `allowance` lets it, ClientDisconnect when the sender goes."""
    check_declared(request.headers.get("content-length"), limit)
    timeout = body_deadline(request).timeout
    loop = asyncio.get_running_loop()
    start = loop.time()
    size = 0
    while True:
        left = start + allowance(timeout, size) - loop.time()
        if left <= 0:
            raise BodyTimeoutError(f"the body did not arrive in time ({size} bytes read)")
        try:
            message = await asyncio.wait_for(request.receive(), left)
        except TimeoutError:
            raise BodyTimeoutError(f"the body did not arrive in time ({size} bytes read)") from None
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        if message["type"] != "http.request":
            continue
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError(f"body is over the {limit}-byte limit")
        write(chunk)
        if not message.get("more_body", False):
            return size


async def receive_file(request: Request, path: Path, limit: int) -> int:
    """Write the request's raw body to `path`; its size (limits and deadline as `_stream`)."""
    with path.open("wb") as out:
        return await _stream(request, limit, out.write)


def boundary_of(content_type: str) -> bytes:
    """The boundary of a multipart Content-Type; MalformedFormError when there is none."""
    found = _BOUNDARY.search(content_type)
    if found is None:
        raise MalformedFormError("a multipart form needs a boundary")
    return (found.group(1) or found.group(2)).encode("latin-1")


@dataclass
class Upload:
    """A multipart form read: every text field's values, and the file part (if any) saved at
    `path` with the name the sender gave it ("" when it gave none)."""

    fields: dict[str, list[str]] = field(default_factory=dict)
    path: Path | None = None
    file_name: str | None = None
    size: int = 0

    def one(self, name: str) -> str:
        """The last value of the field `name` ("" when absent)."""
        return (self.fields.get(name) or [""])[-1]


def _part_names(header_block: bytes) -> tuple[str, str | None]:
    """The part's field name and file name from its Content-Disposition."""
    try:
        text = header_block.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedFormError("a multipart part's headers are not UTF-8") from None
    for line in text.split("\r\n"):
        key, _, value = line.partition(":")
        if key.strip().lower() == "content-disposition":
            params = {k.lower(): v for k, v in _PARAM.findall(value)}
            if "name" not in params:
                break
            return params["name"], params.get("filename")
    raise MalformedFormError("a multipart part has no Content-Disposition name")


class _Parser:
    """A push parser: `feed` chunks in order, `close` at the end.

    The file is the part named `file_field` (with or without a file name), or with ANY_FILE
    every part that has a file name."""

    def __init__(
        self,
        boundary: bytes,
        file_field: str,
        sink: BinaryIO | None,
        limit: int,
        *,
        first_only: bool = False,
    ) -> None:
        # Every delimiter, the first included once "\r\n" is put before the body, is
        # CRLF "--" boundary.
        self._delimiter = b"\r\n--" + boundary
        self._buffer = b"\r\n"
        self._state = "preamble"
        self._file_field = file_field
        self._sink = sink
        self._limit = limit
        self._parts = 0
        self._fields_bytes = 0
        self._current: tuple[str, str | None] | None = None
        self._value = bytearray()
        self._first_only = first_only
        self.upload = Upload()

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        while not (self._first_only and self.upload.fields) and self._step():
            pass

    def _step(self) -> bool:
        """One move of the state machine; False when it needs more bytes."""
        buffer = self._buffer
        if self._state == "preamble":
            at = buffer.find(self._delimiter)
            if at < 0:
                if len(buffer) > MAX_HEADER_BYTES:
                    raise MalformedFormError("no multipart boundary where one was expected")
                return False
            self._buffer = buffer[at + len(self._delimiter) :]
            self._state = "after_delimiter"
            return True
        if self._state == "after_delimiter":
            if len(buffer) < 2:
                return False
            if buffer.startswith(b"--"):
                self._state = "done"
                self._buffer = b""
                return False
            if not buffer.startswith(b"\r\n"):
                raise MalformedFormError("a multipart boundary is followed by junk")
            self._buffer = buffer[2:]
            self._state = "headers"
            return True
        if self._state == "headers":
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEADER_BYTES:
                    raise MalformedFormError("a multipart part's headers are too long")
                return False
            if end > MAX_HEADER_BYTES:
                raise MalformedFormError("a multipart part's headers are too long")
            self._parts += 1
            if self._parts > MAX_PARTS:
                raise MalformedFormError(f"a form has at most {MAX_PARTS} parts")
            self._current = _part_names(buffer[:end])
            self._buffer = buffer[end + 4 :]
            self._state = "body"
            return True
        if self._state == "body":
            at = buffer.find(self._delimiter)
            if at < 0:
                keep = len(self._delimiter) - 1
                if len(buffer) > keep:
                    self._content(buffer[:-keep])
                    self._buffer = buffer[-keep:]
                return False
            self._content(buffer[:at])
            self._end_part()
            self._buffer = buffer[at + len(self._delimiter) :]
            self._state = "after_delimiter"
            return True
        self._buffer = b""
        return False  # done: the epilogue is ignored (the caller bounds the body's size)

    def _is_file(self) -> bool:
        assert self._current is not None
        name, file_name = self._current
        if self._file_field == ANY_FILE:
            return file_name is not None
        return name == self._file_field

    def _content(self, data: bytes) -> None:
        if not data:
            return
        if self._is_file():
            if self._sink is None:
                raise MalformedFormError("a file where a form field was expected")
            if self.upload.file_name is not None:
                raise MalformedFormError("a form takes one file")
            self.upload.size += len(data)
            if self.upload.size > self._limit:
                raise BodyTooLargeError(f"the file is over the {self._limit}-byte limit")
            self._sink.write(data)
            return
        self._fields_bytes += len(data)
        if self._fields_bytes > MAX_FIELDS_BYTES:
            raise BodyTooLargeError(f"the form's fields are over {MAX_FIELDS_BYTES} bytes")
        self._value += data

    def _end_part(self) -> None:
        assert self._current is not None
        name, file_name = self._current
        if self._is_file():
            if self.upload.file_name is not None:
                raise MalformedFormError("a form takes one file")
            self.upload.file_name = file_name or ""
        else:
            try:
                value = self._value.decode("utf-8")
            except UnicodeDecodeError:
                raise MalformedFormError("a form field is not UTF-8 text") from None
            self.upload.fields.setdefault(name, []).append(value)
        self._value = bytearray()
        self._current = None

    def close(self) -> Upload:
        if self._state != "done":
            raise MalformedFormError("the multipart form ends before its last boundary")
        return self.upload


async def read_upload(
    request: Request, path: Path, *, file_field: str = "file", limit: int
) -> Upload:
    """Read the request's multipart form: its text fields, and the part `file_field` written
    to `path` (`Upload.path` stays None when there is no such part). BodyTooLargeError (413)
    as soon as the file passes `limit` bytes, the fields 64 KiB or the whole body `limit` +
    MULTIPART_SLACK; MalformedFormError (400) for a body that is not such a form;
    BodyTimeoutError (408) when it arrives slower than `allowance` lets it."""
    boundary = boundary_of(request.headers.get("content-type", ""))
    with path.open("wb") as sink:
        parser = _Parser(boundary, file_field, sink, limit)
        await _stream(request, limit + MULTIPART_SLACK, parser.feed)
    upload = parser.close()
    if upload.file_name is not None:
        upload.path = path
    return upload


async def _message(receive: Receive) -> Message:
    message = await receive()
    if message["type"] == "http.disconnect":
        raise ClientDisconnect()
    return message


async def first_field(receive: Receive, content_type: str) -> tuple[bytes, bool, str, str]:
    """Read just enough of a multipart body for its first part: (the bytes read, whether
    they are the whole body, the part's name, its value). A first part that is a file, or
    longer than a few KiB, is MalformedFormError: the caller wants a small field there. The
    caller bounds the time it waits (a few KiB earn no more than one body timeout)."""
    boundary = boundary_of(content_type)
    # A file part first is refused (no sink); a field is held in memory (a few KiB at most).
    parser = _Parser(boundary, ANY_FILE, None, 0, first_only=True)
    read = bytearray()
    ended = False
    while not parser.upload.fields:
        message = await _message(receive)
        if message["type"] != "http.request":
            continue
        chunk = message.get("body", b"")
        read += chunk
        ended = not message.get("more_body", False)
        parser.feed(chunk)
        if parser.upload.fields:
            break
        if ended or len(read) > MAX_HEADER_BYTES:
            raise MalformedFormError("the form's first field is missing or too long")
    name, values = next(iter(parser.upload.fields.items()))
    if len(values[0]) > MAX_HEADER_BYTES:
        raise MalformedFormError("the form's first field is too long")
    return bytes(read), ended, name, values[0]
