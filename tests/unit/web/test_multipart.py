"""Multipart uploads read as they stream: any split of the body into chunks reads the same,
limits stop the read as soon as they are passed, malformed bodies are 400s."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.requests import Request

from web.errors import BodyTooLargeError, MalformedBodyError
from web.multipart import first_field, read_upload

BOUNDARY = "xYz-0123"
TYPE = f"multipart/form-data; boundary={BOUNDARY}"


def _body(parts: list[tuple[str, str | None, bytes]], *, end: bool = True) -> bytes:
    body = b"preamble to ignore\r\n"
    for name, file_name, value in parts:
        disposition = f'form-data; name="{name}"'
        if file_name is not None:
            disposition += f'; filename="{file_name}"'
        body += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n".encode()
        body += b"Content-Type: application/octet-stream\r\n\r\n" if file_name else b"\r\n"
        body += value + b"\r\n"
    return body + (f"--{BOUNDARY}--\r\nepilogue".encode() if end else b"")


def _request(chunks: list[bytes], content_type: str = TYPE) -> Request:
    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks or [b""])
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    app = SimpleNamespace(state=SimpleNamespace())
    scope = {
        "type": "http",
        "method": "POST",
        "headers": [(b"content-type", content_type.encode())],
        "app": app,
    }
    return Request(scope, receive)


def _split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(body)) for c in cuts} | {0, len(body)})
    return [body[a:b] for a, b in itertools.pairwise(points)] or [b""]


# A file's bytes may hold CRLF, dashes and most of the boundary: only the whole delimiter ends it.
CONTENT = st.binary(max_size=300).map(lambda b: b + b"\r\n--xYz-012" + b)


@settings(max_examples=150, deadline=None)
@given(content=CONTENT, note=st.text(max_size=40), cuts=st.lists(st.integers(0, 900)))
def test_any_split_of_the_body_reads_the_same(
    content: bytes, note: str, cuts: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Fields and file come out exactly as sent, however the body is chunked."""
    body = _body(
        [("csrf_token", None, b"tok"), ("note", None, note.encode()), ("file", "a.csv", content)]
    )
    path = tmp_path_factory.mktemp("up") / "f"
    upload = asyncio.run(read_upload(_request(_split(body, cuts)), path, limit=10_000))
    assert upload.fields == {"csrf_token": ["tok"], "note": [note]}
    assert upload.file_name == "a.csv" and upload.path == path
    assert path.read_bytes() == content and upload.size == len(content)


@settings(max_examples=80, deadline=None)
@given(cuts=st.lists(st.integers(0, 400)), rest=st.binary(max_size=200))
def test_the_first_field_is_read_alone(cuts: list[int], rest: bytes) -> None:
    """The first field is read without the rest; the bytes read are a prefix of the body."""
    body = _body([("csrf_token", None, b"t0k3n"), ("file", "x", rest)])
    chunks = _split(body, cuts)
    request = _request(chunks)
    head, ended, name, value = asyncio.run(first_field(request.receive, TYPE))
    assert (name, value) == ("csrf_token", "t0k3n")
    assert body.startswith(head) and ended == (head == body)


def test_a_file_over_the_limit_stops_the_read(tmp_path: Path) -> None:
    """413 once the file passes the limit, before the rest of the body is read."""
    body = _body([("file", "big.csv", b"x" * 5000)])
    chunks = _split(body, list(range(0, len(body), 100)))
    request = _request([*chunks, b"never read"])
    with pytest.raises(BodyTooLargeError):
        asyncio.run(read_upload(request, tmp_path / "f", limit=1000))


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (_body([("file", "a", b"x")], end=False), TYPE),  # no closing boundary
        (b"no boundary anywhere" * 400, TYPE),
        (_body([("file", "a", b"x")]), "multipart/form-data"),  # no boundary parameter
        (f"--{BOUNDARY}\r\nX: y\r\n\r\nv\r\n--{BOUNDARY}--".encode(), TYPE),  # no name
        (f"--{BOUNDARY}\r\nX: {'y' * 6000}\r\n\r\n".encode(), TYPE),  # headers too long
        (f"--{BOUNDARY}junk".encode(), TYPE),
        (_body([("file", "a", b"1"), ("file", "b", b"2")]), TYPE),  # two files
        (_body([(f"f{i}", None, b"v") for i in range(40)]), TYPE),  # too many parts
        (_body([("note", None, b"\xff\xfe")]), TYPE),  # not UTF-8
    ],
)
def test_malformed_forms_are_refused(tmp_path: Path, body: bytes, content_type: str) -> None:
    """Each malformed body is a MalformedBodyError (400), never another exception."""
    with pytest.raises(MalformedBodyError):
        asyncio.run(read_upload(_request([body], content_type), tmp_path / "f", limit=10_000))


def test_fields_over_their_limit_are_refused(tmp_path: Path) -> None:
    """The text fields together hold at most 64 KiB."""
    body = _body([("note", None, b"n" * 70_000)])
    with pytest.raises(BodyTooLargeError):
        asyncio.run(read_upload(_request([body]), tmp_path / "f", limit=10_000))


def test_a_first_field_that_is_a_file_or_missing_is_refused() -> None:
    """The token must come first and be small: a file first, or nothing, is refused."""
    for body in (_body([("file", "a.csv", b"x" * 10_000)]), b"", _body([])):
        request = _request([body])
        with pytest.raises(MalformedBodyError):
            asyncio.run(first_field(request.receive, TYPE))
