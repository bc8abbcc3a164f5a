"""XLSX statements read through a column mapping, streaming: openpyxl's read-only mode reads
the sheet row by row from the zip without building it in memory."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Sequence
from typing import BinaryIO

import openpyxl
from openpyxl.utils.exceptions import InvalidFileException

from statements.errors import StatementFormatError
from statements.lines import InvalidLine, ParsedLine
from statements.mapping import Mapping
from statements.table import Cell, read_rows


def read_xlsx(stream: BinaryIO, mapping: Mapping) -> Iterator[ParsedLine | InvalidLine]:
    """The lines of an XLSX statement (the mapping's `sheet`, else the first), each with its
    row number; the stream must be seekable (a zip's index is at its end).
    StatementFormatError when the file is not a workbook or has no such sheet."""
    return read_rows(_rows(stream, mapping), mapping)


def _rows(stream: BinaryIO, mapping: Mapping) -> Iterator[tuple[int, Sequence[Cell]]]:
    try:
        # data_only: a formula cell gives the value the spreadsheet last computed.
        workbook = openpyxl.load_workbook(stream, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError) as exc:
        raise StatementFormatError(f"not an XLSX workbook: {exc}") from exc
    try:
        if mapping.sheet is not None and mapping.sheet not in workbook.sheetnames:
            names = ", ".join(repr(name) for name in workbook.sheetnames)
            raise StatementFormatError(
                f"the workbook has no sheet {mapping.sheet!r}; it has {names}"
            )
        sheet = workbook[mapping.sheet] if mapping.sheet is not None else workbook.worksheets[0]
        # The sheet's stated dimensions may be wrong (some writers omit them): read every
        # row there is. Read-only sheets give empty rows for the gaps, so counting from 1
        # numbers each row as the spreadsheet shows it.
        sheet.reset_dimensions()
        try:
            yield from enumerate(sheet.iter_rows(values_only=True), start=1)
        except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
            raise StatementFormatError(f"the workbook cannot be read: {exc}") from exc
    finally:
        workbook.close()
