"""Registering what was paid elsewhere from the command line: `transfer expect|import` and
`collection expect|import`.

An import streams the CSV twice: once to check every row (each bad one listed with its line
number, nothing written), then to register in batches of BATCH rows inside one transaction —
a merchant's day of 200,000 payouts in seconds, not minutes (issue 25, point 6; bench/
bench_import.py)."""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
from sqlalchemy import Engine, Table
from sqlmodel import Session

from admin.actions.actor import audit
from admin.actions.payments import Registry, register
from admin.errors import ConflictError as ActionConflictError
from admin.errors import ExpectedInputError
from ledger.db import write_session
from ledger.errors import ConflictError, LedgerError
from ledger.registration import held_rows, insert_new
from ledger.types import utcnow
from payrecon.actor import cli_operator
from payrecon.context import EXIT_USAGE, fail

# (session, what to register, now=) -> (the record, created?)
Register = Callable[..., tuple[dict[str, Any], bool]]

T = TypeVar("T")


# Bad rows listed one a line before the verdict; past this many, only their count.
MAX_LISTED = 100
# Rows per batch of the import: one lookup of the references held, one multi-row insert.
BATCH = 5_000


@dataclass(frozen=True)
class CsvSource:
    """A registration CSV: its path, the columns it must have and read, and the row parser."""

    file: Path
    required: tuple[str, ...]
    columns: tuple[str, ...]
    parse: Callable[[dict[str, str | None]], Any]

    def rows(self) -> Iterator[tuple[int, dict[str, str | None]]]:
        """(line number, the wanted cells) of each row, streamed; exit 2 on a missing column
        or an unreadable file."""
        try:
            with self.file.open(newline="", encoding="utf-8-sig") as handle:
                reader = csv.DictReader(handle)
                missing = set(self.required) - set(reader.fieldnames or [])
                if missing:
                    fail(f"{self.file}: missing column(s) {', '.join(sorted(missing))}", EXIT_USAGE)
                for line, row in enumerate(reader, start=2):
                    yield line, {k: row.get(k) for k in self.columns}
        except (UnicodeDecodeError, csv.Error) as exc:
            fail(f"{self.file}: not a readable CSV file ({exc})", EXIT_USAGE)

    def parsed(self) -> Iterator[tuple[int, Any]]:
        """(line number, parsed row) of each row (after `check`, every row parses)."""
        for line, row in self.rows():
            yield line, self.parse(row)

    def stamp(self) -> tuple[int, int]:
        """The file's size and modification time, to notice a file changed mid-import."""
        status = self.file.stat()
        return status.st_size, status.st_mtime_ns


def check_rows(source: CsvSource) -> None:
    """Read the whole file once, keeping nothing: every bad row is listed with its line number
    and the command exits 2 (nothing is written unless every row is valid)."""
    bad = 0
    first = ""
    for line, row in source.rows():
        try:
            source.parse(row)
        except ExpectedInputError as exc:
            bad += 1
            message = f"{source.file}:{line}: {exc.field}: {exc.message}"
            if bad == 1:
                first = message
            elif bad <= MAX_LISTED:
                if bad == 2:
                    click.echo(f"payrecon: {first}", err=True)
                click.echo(f"payrecon: {message}", err=True)
    if bad == 1:
        fail(first, EXIT_USAGE)  # one bad row: one line, as always
    if bad:
        more = f" ({bad - MAX_LISTED:,} not listed)" if bad > MAX_LISTED else ""
        fail(f"{source.file}: {bad:,} bad rows{more}; nothing imported", EXIT_USAGE)


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
    except ActionConflictError as exc:
        fail(exc.message)
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    verb = "registered" if created else "already registered (identical)"
    click.echo(f"{record['reference']}: {verb}")


@dataclass(frozen=True)
class Batched:
    """How one kind of registration is inserted in batches: its table, the references a row
    may already be held under, and its new row (`ledger.queries.expected_transfer_row`…)."""

    table: Table
    keys: Callable[[Any], tuple[str | None, ...]]
    row: Callable[[Any, dt.datetime], dict[str, Any]]
    # The held columns `identical` reads, and whether a held row (as `held_rows` reads it)
    # is exactly what the registration says, so repeating an import needs no row-by-row work.
    compared: tuple[str, ...]
    identical: Callable[[Any, dict[str, Any], Session], bool]


def register_all(
    engine: Engine,
    source: CsvSource,
    *,
    registry: Registry,
    batched: Batched,
    as_json: bool,
) -> None:
    """Register every row of a checked file in one transaction, in batches (a conflict anywhere
    imports nothing; the import is one `action` row of the audit log) and print the summary.

    A row whose references the ledger (or an earlier row of the file) already holds goes
    through `register` — identical is fine, different is a conflict, an orphan's webhook is
    matched — exactly as one registration; every other row is inserted in multi-row
    statements (`ledger.registration`).
    """
    created = identical = 0
    stamp = source.stamp()
    try:
        with write_session(engine) as session:
            now = utcnow()
            batch: list[tuple[int, Any]] = []
            for item in source.parsed():
                batch.append(item)
                if len(batch) >= BATCH:
                    made, same = _register_batch(
                        session, batch, registry.write, batched, now, source
                    )
                    created, identical, batch = created + made, identical + same, []
            made, same = _register_batch(session, batch, registry.write, batched, now, source)
            created, identical = created + made, identical + same
            if source.stamp() != stamp:
                raise ImportChangedError(f"{source.file} changed while it was imported")
            if created:
                detail = f"{created} registered from {source.file.name}"
                audit(session, cli_operator(), registry.action, None, detail, now=now)
    except ConflictError as exc:
        fail(f"{exc} (nothing imported)")
    except ImportChangedError as exc:
        fail(f"{exc} (nothing imported)")
    except ExpectedInputError as exc:  # the file changed between the check and the import
        fail(f"{source.file}: {exc.field}: {exc.message} (nothing imported)", EXIT_USAGE)
    except LedgerError as exc:
        fail(f"database unavailable: {exc}")
    rows = created + identical
    if as_json:
        click.echo(
            json.dumps({"rows": rows, "registered": created, "already_registered": identical})
        )
    else:
        click.echo(f"{rows} rows: {created} registered, {identical} already registered")


class ImportChangedError(Exception):
    """The file was written to between the check and the import."""


def _register_batch(
    session: Session,
    batch: list[tuple[int, Any]],
    register: Register,
    batched: Batched,
    now: dt.datetime,
    source: CsvSource,
) -> tuple[int, int]:
    if not batch:
        return 0, 0
    wanted = {key for _, expected in batch for key in batched.keys(expected) if key}
    held = held_rows(session, batched.table, wanted, batched.compared)
    fresh: list[dict[str, Any]] = []
    one_by_one: list[tuple[int, Any]] = []
    seen: set[str] = set()
    for line, expected in batch:
        keys = [key for key in batched.keys(expected) if key]
        found = next((held[key] for key in keys if key in held), None)
        if (
            found is not None
            and not set(keys) & seen
            and batched.identical(expected, found, session)
        ):
            pass  # held already, exactly as registered: nothing to do
        elif found is not None or set(keys) & seen:
            # Held differently, or named by an earlier row of the file: the single rules.
            one_by_one.append((line, expected))
        else:
            fresh.append(batched.row(expected, now))
        seen.update(keys)
    insert_new(session, batched.table, fresh)
    created = len(fresh)
    for line, expected in one_by_one:
        try:
            _, was_created = register(session, expected, now=now)
        except ConflictError as exc:
            raise ConflictError(f"{source.file}:{line}: {exc}") from exc
        created += was_created
    return created, len(batch) - created
