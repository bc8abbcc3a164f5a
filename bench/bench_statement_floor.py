"""What a statement line costs before it is matched or stored: the floor under `statement
import`, beside the import benchmark's baseline (bench/bench_statements.py, bench/RESULTS.md
section 16).

Run: .venv/bin/python bench/bench_statement_floor.py [--transfers 50000] [--rounds 3]

The wallet statement of bench_statements.py (two lines per payout) is written once, then each
step the import cannot skip is timed alone, in CPU time per line (the best of `--rounds`):

* read: the CSV read through the `sandbox` mapping, every cell validated (statements.formats);
* identity: each line's identity (statements.identity);
* tokens: the references a line's texts may name (statements.tokens), which matching looks up;
* baseline read: the benchmark baseline's own loop (the csv module, amounts to kobo);
* baseline: the whole baseline, that loop and its executemany into an unindexed SQLite table.

The last line says what ratio to the baseline the import could reach if matching and storing
cost nothing: the baseline's time over read + identity + tokens.
"""

from __future__ import annotations

import argparse
import csv
import resource
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_statements import write_statement

from statements.formats import StatementFormat, parse_statement
from statements.identity import line_identities
from statements.lines import InvalidLine, ParsedLine
from statements.mapping import load_mapping
from statements.tokens import reference_tokens


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _best(rounds: int, step: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(rounds):
        started = _cpu()
        result = step()
        best = min(best, _cpu() - started)
    return best, result


def _read(path: Path) -> list[ParsedLine]:
    with path.open("rb") as raw:
        parsed = parse_statement(
            raw, format=StatementFormat.CSV, mapping=load_mapping("sandbox"), filename=path.name
        )
        return [line for line in parsed.lines if not isinstance(line, InvalidLine)]


def _kobo(value: str) -> int | None:
    if not value:
        return None
    whole, _, part = value.replace(",", "").partition(".")
    return int(whole) * 100 + int(part or 0)


def _baseline_rows(path: Path) -> list[tuple[Any, ...]]:
    rows = []
    with path.open(newline="", encoding="utf-8") as file:
        reader = csv.reader(file)
        next(reader)
        for number, row in enumerate(reader, start=2):
            debit = _kobo(row[4])
            amount, direction = (debit, "debit") if debit else (_kobo(row[5]), "credit")
            rows.append(
                (number, 1, str(number), row[0], row[1] or None, amount, direction,
                 _kobo(row[6]), row[2], row[3], 1, number, number, "unmatched")
            )  # fmt: skip
    return rows


def _baseline(path: Path, folder: Path) -> None:
    database = folder / "baseline.db"
    database.unlink(missing_ok=True)
    connection = sqlite3.connect(database)
    connection.execute(
        "CREATE TABLE baseline_line (id BIGINT PRIMARY KEY, account_id BIGINT, identity TEXT,"
        " date DATE, value_date DATE, amount BIGINT, direction TEXT, balance BIGINT,"
        " reference TEXT, narration TEXT, import_id BIGINT, file_line BIGINT, position BIGINT,"
        " state TEXT)"
    )
    rows = _baseline_rows(path)
    for start in range(0, len(rows), 5000):
        connection.executemany(
            "INSERT INTO baseline_line VALUES (" + ", ".join("?" * 14) + ")",
            rows[start : start + 5000],
        )
    connection.commit()
    connection.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        path = folder / "statement.csv"
        lines = write_statement(path, args.transfers)
        read, parsed = _best(args.rounds, lambda: _read(path))
        identity, _ = _best(
            args.rounds, lambda: list(line_identities(parsed, account="provider-wallet"))
        )
        tokens, _ = _best(
            args.rounds, lambda: [reference_tokens(p.reference, p.narration) for p in parsed]
        )
        base_read, _ = _best(args.rounds, lambda: _baseline_rows(path))
        baseline, _ = _best(args.rounds, lambda: _baseline(path, folder))
    per_line = {
        "read": read,
        "identity": identity,
        "tokens": tokens,
        "baseline read": base_read,
        "baseline (read + insert)": baseline,
    }
    print(f"{lines:,} lines, CPU µs per line (best of {args.rounds}):")
    for name, seconds in per_line.items():
        print(f"  {name:26} {seconds / lines * 1e6:6.1f}")
    floor = read + identity + tokens
    print(f"ceiling with free matching and storing: {baseline / floor:.2f}× the SQLite baseline")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
