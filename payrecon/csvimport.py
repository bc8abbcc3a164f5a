"""Registering what was paid elsewhere from the command line: `transfer expect|import` and
`collection expect|import` (the CSV is checked whole before anything is written)."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click
from sqlalchemy import Engine

from admin.actions.payments import Registry, register, register_many
from admin.errors import ConflictError, ExpectedInputError
from ledger.db import write_session
from ledger.errors import LedgerError
from ledger.types import utcnow
from payrecon.actor import cli_operator
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


def register_one(
    engine: Engine,
    data: Mapping[str, Any],
    *,
    parse: Callable[[Mapping[str, Any]], T],
    registry: Registry,
) -> None:
    """Check the options (exit 2 naming the first bad one), register (admin.actions.payments),
    print the outcome."""
    try:
        expected = parse(data)
    except ExpectedInputError as exc:
        fail(f"--{(exc.field or '').replace('_', '-')}: {exc.message}", EXIT_USAGE)
    try:
        with write_session(engine) as session:
            record, created = register(session, cli_operator(), registry, expected, now=utcnow())
    except ConflictError as exc:
        fail(exc.message)
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    verb = "registered" if created else "already registered (identical)"
    click.echo(f"{record['reference']}: {verb}")


def register_all(
    engine: Engine,
    file: Path,
    parsed: Iterable[T],
    *,
    registry: Registry,
    as_json: bool,
) -> None:
    """Register every parsed row in one transaction (a conflict anywhere imports nothing; the
    import is one row of the audit log) and print the summary."""
    try:
        with write_session(engine) as session:
            created, identical = register_many(
                session, cli_operator(), registry, parsed, source=str(file), now=utcnow()
            )
    except ConflictError as exc:
        fail(f"{exc.message} (nothing imported)")
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    rows = created + identical
    if as_json:
        click.echo(
            json.dumps({"rows": rows, "registered": created, "already_registered": identical})
        )
    else:
        click.echo(f"{rows} rows: {created} registered, {identical} already registered")
