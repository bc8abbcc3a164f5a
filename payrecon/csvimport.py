"""Reading a registration CSV for `transfer import` and `collection import`: whole file first."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from admin.errors import ExpectedInputError
from payrecon.context import EXIT_USAGE, fail

T = TypeVar("T")


def parse_rows(
    file: Path,
    *,
    required: Iterable[str],
    columns: Iterable[str],
    parse: Callable[[dict[str, str | None]], T],
) -> list[T]:
    """Every row of `file` parsed; exit 2 naming the file (and line) on a missing column, an
    unreadable file or the first bad row, so nothing is written unless every row is valid."""
    wanted = tuple(columns)
    try:
        with file.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = set(required) - set(reader.fieldnames or [])
            if missing:
                fail(f"{file}: missing column(s) {', '.join(sorted(missing))}", EXIT_USAGE)
            rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as exc:
        fail(f"{file}: not a readable CSV file ({exc})", EXIT_USAGE)
    parsed = []
    for line, row in enumerate(rows, start=2):
        try:
            parsed.append(parse({k: row.get(k) for k in wanted}))
        except ExpectedInputError as exc:
            fail(f"{file}:{line}: {exc.field}: {exc.message}", EXIT_USAGE)
    return parsed
