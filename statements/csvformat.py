"""CSV statements read through a column mapping, streaming: the file is decoded and split
into rows as it is read, so memory stays flat however long it is."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from statements.errors import StatementFormatError
from statements.lines import InvalidLine, ParsedLine
from statements.mapping import Mapping
from statements.table import read_rows


def read_csv(stream: BinaryIO, mapping: Mapping) -> Iterator[ParsedLine | InvalidLine]:
    """The lines of a CSV statement, each with the physical line number its row starts on;
    StatementFormatError when the file is not text in the mapping's encoding or not CSV."""
    return read_rows(_rows(stream, mapping), mapping)


def _rows(stream: BinaryIO, mapping: Mapping) -> Iterator[tuple[int, Sequence[str]]]:
    # newline="" lets the csv module see quoted line breaks inside a field as data.
    text = io.TextIOWrapper(stream, encoding=mapping.encoding, newline="")  # type: ignore[type-var]
    reader = csv.reader(text, delimiter=mapping.delimiter, strict=True)
    start = 1
    try:
        for row in reader:
            yield start, row
            start = reader.line_num + 1
    except UnicodeDecodeError as exc:
        raise StatementFormatError(
            f"line {start} is not {mapping.encoding} text (mapping {mapping.name})"
        ) from exc
    except csv.Error as exc:
        raise StatementFormatError(f"line {start} is not CSV: {exc}") from exc
    finally:
        # The caller owns the stream: leave it open when the wrapper goes away.
        text.detach()
