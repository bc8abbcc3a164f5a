"""Bulk registration: `transfer import` and `collection import` of 200,000 rows, on SQLite
and PostgreSQL, beside a bare `executemany` of the same rows into the same table.

Run: .venv/bin/python bench/bench_import.py [--rows 200000] [--postgres URL|--no-postgres]
     [--results FILE]

For each database and each command: a fresh migrated ledger, a CSV of `--rows` rows written
first, then the command run in-process as a user runs it (check the whole file, then register
in batches, one transaction, one audit row). The baseline, in the same run: a fresh ledger and
the driver's own `executemany` of the same rows (already parsed, no checks) into the same
table. Target (issue 25, point 6): under 30 s each.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from click.testing import CliRunner

from ledger.migrate import upgrade
from payrecon.cli import cli

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
NOW = dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC)

_TRANSFER_SQL = (
    "INSERT INTO transfer (reference, provider_reference, origin, status, confirmed, amount, "
    "fee, check_attempts, not_found_count, event_sequence, next_check_at, created_at, "
    "updated_at) VALUES ({})"
)
_COLLECTION_SQL = (
    "INSERT INTO collection (reference, origin, status, confirmed, amount, expires_at, "
    "final_check_done, check_attempts, not_found_count, event_sequence, next_check_at, "
    "created_at, updated_at) VALUES ({})"
)


def _csv(path: Path, kind: str, rows: int) -> None:
    with path.open("w") as handle:
        if kind == "transfer":
            handle.write("reference,amount,fee,provider_reference\n")
            handle.writelines(f"BT-{n},{10_000 + n},1075,BTP-{n}\n" for n in range(rows))
        else:
            handle.write("reference,amount,expires_at\n")
            handle.writelines(f"BC-{n},{10_000 + n},2026-12-01T00:00:00Z\n" for n in range(rows))


def _bare_rows(kind: str, rows: int, time_value: object) -> list[tuple[object, ...]]:
    if kind == "transfer":
        return [
            (f"BT-{n}", f"BTP-{n}", "expected", "pending", False, 10_000 + n, 1075, 0, 0, 0)
            + (time_value,) * 3
            for n in range(rows)
        ]
    return [
        (f"BC-{n}", "expected", "pending", False, 10_000 + n, time_value, False, 0, 0, 0)
        + (time_value,) * 3
        for n in range(rows)
    ]


class Database:
    """A fresh, migrated ledger on one kind of database, made again for every run."""

    def __init__(self, name: str, make: Callable[[int], str], bare: Callable[..., float]) -> None:
        self.name, self.make, self.bare = name, make, bare


def _sqlite(directory: Path) -> Database:
    def make(run: int) -> str:
        url = f"sqlite:///{directory}/ledger-{run}.db"
        upgrade(url)
        return url

    def bare(url: str, sql: str, rows: list[tuple[object, ...]]) -> float:
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        started = time.perf_counter()
        with connection:
            connection.executemany(sql.format(", ".join("?" * len(rows[0]))), rows)
        elapsed = time.perf_counter() - started
        connection.close()
        return elapsed

    return Database("SQLite", make, bare)


def _postgres(admin_url: str) -> Database:
    import psycopg

    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    base = plain.rsplit("/", 1)[0]

    def make(run: int) -> str:
        name = f"payrecon_bench_import_{os.getpid()}_{run}"
        with psycopg.connect(plain, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name}")
            connection.execute(f"CREATE DATABASE {name}")
        url = f"postgresql+psycopg://{base.removeprefix('postgresql://')}/{name}"
        upgrade(url)
        return url

    def bare(url: str, sql: str, rows: list[tuple[object, ...]]) -> float:
        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as connection:
            started = time.perf_counter()
            with connection.cursor() as cursor:
                cursor.executemany(sql.format(", ".join(["%s"] * len(rows[0]))), rows)
            connection.commit()
            return time.perf_counter() - started

    return Database("PostgreSQL", make, bare)


def _drop_postgres(admin_url: str, runs: int) -> None:
    import psycopg

    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as connection:
        for run in range(runs):
            connection.execute(f"DROP DATABASE IF EXISTS payrecon_bench_import_{os.getpid()}_{run}")


def _command(url: str, kind: str, csv_file: Path) -> float:
    started = time.perf_counter()
    result = CliRunner().invoke(
        cli, [kind, "import", str(csv_file), "--json"], env={"PAYRECON_DATABASE_URL": url}
    )
    elapsed = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(f"{kind} import failed: {result.output}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    lines = [
        f"# bench_import: {args.rows:,} rows ({platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cpus)",
        "",
        "| database | command | import s | rows/s | bare executemany s | ratio |",
        "|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        databases = [_sqlite(directory)]
        if not args.no_postgres:
            databases.append(_postgres(args.postgres))
        run = 0
        for database in databases:
            for kind, sql in (("transfer", _TRANSFER_SQL), ("collection", _COLLECTION_SQL)):
                csv_file = directory / f"{kind}.csv"
                _csv(csv_file, kind, args.rows)
                url = database.make(run)
                imported = _command(url, kind, csv_file)
                bare_url = database.make(run + 1)
                time_value = NOW if database.name == "PostgreSQL" else "2026-03-01 09:00:00.000000"
                bare = database.bare(bare_url, sql, _bare_rows(kind, args.rows, time_value))
                run += 2
                line = (
                    f"| {database.name} | {kind} import | {imported:.1f} | "
                    f"{args.rows / imported:,.0f} | {bare:.1f} | {imported / bare:.1f}× |"
                )
                print(line, flush=True)
                lines.append(line)
        if not args.no_postgres:
            _drop_postgres(args.postgres, run)
    if args.results:
        args.results.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
