"""Which format a statement file is in, and the one entry point that parses any of them
(docs/rules.md "Statements and period tie-out": `--format auto|csv|xlsx|mt940|camt053`)."""

from __future__ import annotations

import enum
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from statements.camtformat import CamtStatement
from statements.csvformat import read_csv
from statements.errors import MappingError, StatementFormatError
from statements.lines import InvalidLine, ParsedLine, StatedBalances
from statements.mapping import Mapping
from statements.mt940format import Mt940Statement
from statements.xlsxformat import read_xlsx

# Enough of the start of a file to tell the formats apart (a CAMT namespace comes after the
# XML declaration and perhaps a comment).
HEAD_BYTES = 4096
_ZIP_MAGIC = b"PK\x03\x04"
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


class StatementFormat(enum.StrEnum):
    """The formats `statement import --format` takes."""

    AUTO = "auto"
    CSV = "csv"
    XLSX = "xlsx"
    MT940 = "mt940"
    CAMT053 = "camt053"


@dataclass(frozen=True, slots=True)
class ParsedStatement:
    """A statement being read: `lines` yields each line once, in file order, as it is read;
    `stated()` gives the balances the file states, complete once `lines` is exhausted."""

    format: StatementFormat
    lines: Iterator[ParsedLine | InvalidLine]
    stated: Callable[[], StatedBalances]


def detect_format(head: bytes, filename: str | None = None) -> StatementFormat:
    """The format of a file from its first bytes (and its name, for the cases the bytes leave
    open): XLSX is a zip, CAMT.053 is XML naming camt.053, MT940 starts with `:20:` or a
    SWIFT `{1:` block; anything else is read as CSV. StatementFormatError for XML that is not
    CAMT.053."""
    if head.startswith(_ZIP_MAGIC):
        return StatementFormat.XLSX
    text = head
    for bom in _BOMS:
        text = text.removeprefix(bom)
    text = text.lstrip()
    if text.startswith(b"<"):
        if b"camt.053" in head:
            return StatementFormat.CAMT053
        raise StatementFormatError("an XML file that is not a CAMT.053 statement")
    if text.startswith((b":20:", b"{1:")):
        return StatementFormat.MT940
    name = (filename or "").lower()
    if name.endswith((".sta", ".mt940", ".940")):
        return StatementFormat.MT940
    return StatementFormat.CSV


def parse_statement(
    stream: BinaryIO,
    *,
    format: StatementFormat | str = StatementFormat.AUTO,
    mapping: Mapping | None = None,
    filename: str | None = None,
) -> ParsedStatement:
    """Start reading `stream` as a statement of `format` (`auto`: detected from its first
    bytes). CSV and XLSX need a mapping (MappingError without one). Nothing is read beyond
    the head until `lines` is iterated, and then only as far as it is, so a file of any size
    is read in flat memory. StatementFormatError (from `lines` too) when the file is not a
    statement of that format."""
    chosen = StatementFormat(format)
    if chosen is StatementFormat.AUTO:
        stream, head = _peek(stream)
        chosen = detect_format(head, filename)
    if chosen in {StatementFormat.CSV, StatementFormat.XLSX}:
        if mapping is None:
            raise MappingError(f"a {chosen.value} statement needs a column mapping")
        read = read_csv if chosen is StatementFormat.CSV else read_xlsx
        return ParsedStatement(chosen, read(stream, mapping), StatedBalances)
    reader = Mt940Statement(stream) if chosen is StatementFormat.MT940 else CamtStatement(stream)
    return ParsedStatement(chosen, reader.lines(), lambda: reader.stated)


def _peek(stream: BinaryIO) -> tuple[BinaryIO, bytes]:
    """The stream's first HEAD_BYTES, and a stream that still starts at the beginning."""
    if stream.seekable():
        start = stream.tell()
        head = stream.read(HEAD_BYTES)
        stream.seek(start)
        return stream, head
    buffered = io.BufferedReader(_Raw(stream), buffer_size=max(HEAD_BYTES, io.DEFAULT_BUFFER_SIZE))
    return buffered, buffered.peek(HEAD_BYTES)[:HEAD_BYTES]


class _Raw(io.RawIOBase):
    """A non-seekable binary stream seen as a raw stream, so a BufferedReader can peek."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
