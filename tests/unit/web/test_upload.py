"""Uploads read as they stream (a raw body or a multipart form): any split of the body into
chunks reads the same, limits stop the read as soon as they are passed, the deadline grows with
what arrived, malformed bodies are 400s."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.requests import ClientDisconnect, Request

from web.body import BodyDeadline
from web.errors import BodyTimeoutError, BodyTooLargeError, MalformedBodyError
from web.upload import (
    BYTES_PER_TIMEOUT,
    MAX_HEADER_BYTES,
    MULTIPART_SLACK,
    allowance,
    first_field,
    read_upload,
    receive_file,
)

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


def _messages(chunks: list[bytes]) -> list[dict[str, Any]]:
    return [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks or [b""])
    ]


def _request(
    chunks: list[bytes],
    content_type: str = TYPE,
    *,
    messages: list[dict[str, Any]] | None = None,
    headers: tuple[tuple[bytes, bytes], ...] = (),
    timeout: float | None = None,
) -> Request:
    queue = _messages(chunks) if messages is None else messages

    async def receive() -> dict[str, Any]:
        if not queue:
            await asyncio.Event().wait()  # a sender that stalls: nothing more ever comes
        return queue.pop(0)

    state = SimpleNamespace()
    if timeout is not None:
        state.body_deadline = BodyDeadline(timeout)
    scope = {
        "type": "http",
        "method": "POST",
        "headers": [(b"content-type", content_type.encode()), *headers],
        "app": SimpleNamespace(state=state),
    }
    return Request(scope, receive)


def _split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(body)) for c in cuts} | {0, len(body)})
    return [body[a:b] for a, b in itertools.pairwise(points)] or [b""]


# A file's bytes may hold CRLF, dashes and most of the boundary: only the whole delimiter ends it.
# (The whole delimiter itself, "3" after the near miss, would end the part: a sender never puts
# it in a part, so neither does the strategy; it has no border, so nothing else can end it.)
DELIMITER = f"\r\n--{BOUNDARY}".encode()
CONTENT = (
    st.binary(max_size=300)
    .map(lambda b: b + b"\r\n--xYz-012" + b)
    .filter(lambda b: DELIMITER not in b)
)
NOTE = st.text(max_size=40).filter(lambda t: DELIMITER not in t.encode())


@settings(max_examples=150, deadline=None)
@given(content=CONTENT, note=NOTE, cuts=st.lists(st.integers(0, 900)))
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
    messages = _messages([*_split(body, list(range(0, len(body), 100))), b"never read"])
    with pytest.raises(BodyTooLargeError):
        asyncio.run(read_upload(_request([], messages=messages), tmp_path / "f", limit=1000))
    assert len(messages) > 10 and messages[-1]["body"] == b"never read"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (_body([("file", "a", b"x")], end=False), TYPE),  # no closing boundary
        (b"no boundary anywhere" * 400, TYPE),
        (_body([("file", "a", b"x")]), "multipart/form-data"),  # no boundary parameter
        (f"--{BOUNDARY}\r\nX: y\r\n\r\nv\r\n--{BOUNDARY}--".encode(), TYPE),  # no name
        (f"--{BOUNDARY}\r\nX: {'y' * 6000}\r\n\r\n".encode(), TYPE),  # headers too long
        (f"--{BOUNDARY}\r\nX: {'y' * 6000}\r\n\r\nv\r\n--{BOUNDARY}--".encode(), TYPE),
        (_body([("file", "a", b"1"), ("note", None, b"n"), ("file", None, b"2")]), TYPE),
        (_body([("note", None, b"n")])[:-40], TYPE),  # cut short
        (_body([("n", None, b"v")]).replace(b'name="n"', b'name="\xff"'), TYPE),  # not UTF-8
        (f"--{BOUNDARY}junk".encode(), TYPE),
        (_body([("file", "a", b"1"), ("file", "b", b"2")]), TYPE),  # two files
        (_body([(f"f{i}", None, b"v") for i in range(40)]), TYPE),  # too many parts
        (_body([("note", None, b"\xff\xfe")]), TYPE),  # not UTF-8
    ],
)
def test_malformed_forms_are_refused(tmp_path: Path, body: bytes, content_type: str) -> None:
    """Each malformed body is a MalformedBodyError (400, a plain bad request), never another
    exception."""
    with pytest.raises(MalformedBodyError) as refused:
        asyncio.run(read_upload(_request([body], content_type), tmp_path / "f", limit=10_000))
    assert (refused.value.status_code, refused.value.code) == (400, "bad_request")


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


@settings(max_examples=100, deadline=None)
@given(content=st.binary(max_size=600), cuts=st.lists(st.integers(0, 700)))
def test_any_split_of_a_raw_body_writes_the_same(
    content: bytes, cuts: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A raw body is written to disk exactly as sent, however it is chunked."""
    path = tmp_path_factory.mktemp("raw") / "f"
    size = asyncio.run(receive_file(_request(_split(content, cuts), "text/csv"), path, 600))
    assert path.read_bytes() == content and size == len(content)


def test_a_raw_body_over_the_limit_stops_the_read(tmp_path: Path) -> None:
    """413 once a raw body passes the limit, the rest unread; a declared length over it reads
    nothing at all."""
    messages = _messages([b"x" * 100] * 20 + [b"never read"])
    with pytest.raises(BodyTooLargeError):
        asyncio.run(receive_file(_request([], messages=messages), tmp_path / "f", 1000))
    assert len(messages) == 10
    declared = _messages([b"x" * 10])
    request = _request([], "text/csv", messages=declared, headers=((b"content-length", b"5000"),))
    with pytest.raises(BodyTooLargeError):
        asyncio.run(receive_file(request, tmp_path / "g", 1000))
    assert len(declared) == 1


def test_a_form_declared_over_its_limit_reads_nothing(tmp_path: Path) -> None:
    """A Content-Length past the file limit plus the form's slack is 413 before any read."""
    messages = _messages([_body([("file", "a", b"x")])])
    length = str(1000 + MULTIPART_SLACK + 1).encode()
    request = _request([], messages=messages, headers=((b"content-length", length),))
    with pytest.raises(BodyTooLargeError):
        asyncio.run(read_upload(request, tmp_path / "f", limit=1000))
    assert len(messages) == 1


def test_an_endless_epilogue_is_cut_off(tmp_path: Path) -> None:
    """Bytes after the closing boundary count too: the whole body is bounded."""
    body = _body([("file", "a", b"x")]) + b"e" * (1000 + MULTIPART_SLACK)
    with pytest.raises(BodyTooLargeError):
        asyncio.run(read_upload(_request(_split(body, [5000])), tmp_path / "f", limit=1000))


@pytest.mark.parametrize("reader", ["raw", "form"])
def test_a_stalled_body_is_a_timeout(tmp_path: Path, reader: str) -> None:
    """Half a body, then nothing: BodyTimeoutError (408), never a wait for ever."""
    half = _body([("file", "a", b"x" * 100)])[:80]
    messages = [{"type": "http.request", "body": half, "more_body": True}]
    request = _request([], messages=messages, timeout=0.01)
    with pytest.raises(BodyTimeoutError):
        if reader == "raw":
            asyncio.run(receive_file(request, tmp_path / "f", 1000))
        else:
            asyncio.run(read_upload(request, tmp_path / "f", limit=1000))


def test_a_sender_that_goes_away_is_a_disconnect(tmp_path: Path) -> None:
    """A disconnect mid-body is Starlette's ClientDisconnect for both readers."""
    for read in (
        lambda r: receive_file(r, tmp_path / "f", 1000),
        lambda r: read_upload(r, tmp_path / "g", limit=1000),
    ):
        messages: list[dict[str, Any]] = [
            {"type": "http.request", "body": b"--xYz", "more_body": True},
            {"type": "http.disconnect"},
        ]
        with pytest.raises(ClientDisconnect):
            asyncio.run(read(_request([], messages=messages)))


def test_the_deadline_grows_with_what_arrived_and_is_bounded() -> None:
    """One timeout to start, one more per BYTES_PER_TIMEOUT received; the limit bounds it."""
    assert allowance(10.0, 0) == 10.0
    assert allowance(10.0, BYTES_PER_TIMEOUT - 1) == 10.0
    assert allowance(10.0, BYTES_PER_TIMEOUT) == 20.0
    assert allowance(10.0, 200_000_000) == 10.0 * (1 + 200_000_000 // BYTES_PER_TIMEOUT) < 130


def test_the_named_part_is_the_file_with_or_without_a_file_name(tmp_path: Path) -> None:
    """`curl -F file=<x.csv` sends no file name: the part `file` is still the file; other
    parts with file names are fields, and a form without the part has no file."""
    body = _body([("file", None, b"a,b\r\n1,2"), ("other", "o.csv", b"o")])
    upload = asyncio.run(read_upload(_request([body]), tmp_path / "f", limit=100))
    assert upload.path == tmp_path / "f" and upload.file_name == ""
    assert (tmp_path / "f").read_bytes() == b"a,b\r\n1,2" and upload.fields == {"other": ["o"]}
    none = asyncio.run(
        read_upload(_request([_body([("x", "x.csv", b"1")])]), tmp_path / "g", limit=9)
    )
    assert none.path is None and none.file_name is None and none.fields == {"x": ["1"]}


def test_duplicate_and_out_of_order_fields_are_all_kept(tmp_path: Path) -> None:
    """The file may come before the fields; a field sent twice keeps both values, the last
    one is `one`'s; a quoted boundary reads the same."""
    body = _body([("file", "a", b"1"), ("note", None, b"first"), ("note", None, b"second")])
    quoted = f'multipart/form-data; boundary="{BOUNDARY}"; charset=utf-8'
    upload = asyncio.run(read_upload(_request([body], quoted), tmp_path / "f", limit=10))
    assert upload.fields == {"note": ["first", "second"]} and upload.one("note") == "second"
    assert upload.one("missing") == "" and upload.size == 1


def test_a_long_first_field_is_refused() -> None:
    """The CSRF peek reads a few KiB at most: a longer first field is refused."""
    body = _body([("csrf_token", None, b"t" * (MAX_HEADER_BYTES + 10)), ("file", "a", b"x")])
    with pytest.raises(MalformedBodyError):
        asyncio.run(first_field(_request(_split(body, [100, 200])).receive, TYPE))
