"""CSV statements read through a column mapping, streaming: the file is decoded and split
into rows line by line as it is read, so memory stays flat however long it is."""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from statements.errors import StatementFormatError
from statements.lines import InvalidLine, ParsedLine
from statements.mapping import Mapping
from statements.table import read_rows

# No statement line is this long; a file without line breaks is not read whole into memory.
MAX_LINE_BYTES = 1024 * 1024


def read_csv(stream: BinaryIO, mapping: Mapping) -> Iterator[ParsedLine | InvalidLine]:
    """The lines of a CSV statement, each with the physical line number its row starts on;
    StatementFormatError when the file is not text in the mapping's encoding or not CSV."""
    return read_rows(_rows(stream, mapping), mapping, texts=True)


def _rows(stream: BinaryIO, mapping: Mapping) -> Iterator[tuple[int, Sequence[str]]]:
    reader = csv.reader(_text_lines(stream, mapping), delimiter=mapping.delimiter, strict=True)
    start = 1
    try:
        for row in reader:
            yield start, row
            start = reader.line_num + 1
    except csv.Error as exc:
        raise StatementFormatError(f"line {start} is not CSV: {exc}") from exc


def _text_lines(stream: BinaryIO, mapping: Mapping) -> Iterator[str]:
    """The file's physical lines decoded one at a time, so a decoding error names its line
    (an incremental decoder: a character is never cut at a line end)."""
    decoder = codecs.getincrementaldecoder(mapping.encoding)(errors="strict")
    number = 0
    try:
        while raw := stream.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise StatementFormatError(f"line {number} is longer than {MAX_LINE_BYTES} bytes")
            yield decoder.decode(raw)
        if tail := decoder.decode(b"", final=True):
            yield tail
    except UnicodeDecodeError as exc:
        raise StatementFormatError(
            f"line {number} is not {mapping.encoding} text (the mapping's encoding)"
        ) from exc
