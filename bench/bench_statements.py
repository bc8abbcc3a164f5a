"""`statement import` and the period tie-out at scale, on SQLite and PostgreSQL.

Run: .venv/bin/python bench/bench_statements.py [--transfers 1000000]
     [--backend sqlite|postgresql|both] [--results FILE]

A ledger of `--transfers` settled payouts over November 2026 (built in the database: a
recursive CTE on SQLite, generate_series on PostgreSQL) and the wallet statement of that month
in the sandbox's CSV shape: per payout a debit of the amount and a debit of its fee, under the
provider's reference (2 lines per transfer).

1. Import: `import_statement` (parse, validate, identity, balance chain, store, match) in a
   child process, lines per second and the child's peak RSS (`resource.getrusage`). Target:
   ≥ 0.5× the baseline, peak RSS < 300 MB.
2. Baseline, in the same run: the same file read with the standard `csv` module, amounts turned
   into kobo, and bulk-inserted (executemany, batches of 5,000) into a table of the same shape,
   with no identity, no balance check and no matching.
3. Tie-out: `period_tie_out` of the month right after the import, as an operator closing the
   month at once would see it. Target: under 5 s. The import has refreshed PostgreSQL's
   statistics of the lines (`ledger.statistics`: planned without them the tie-out took
   12–18 s, bench/RESULTS.md §18), but nothing has vacuumed them yet, so its index-only scans
   still read the table to check visibility; `bench_tieout.py --vacuum` measures the month
   after autovacuum's VACUUM.
4. Reconcile pass: 100 new open lines beside the month's matched ones, and the matching step
   of a reconcile pass (`match_statements`), the slowest of three. Target: well under 1 s.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Engine, text

from ledger.db import create_db_engine
from ledger.migrate import upgrade

FEE = 1075
DAYS = 30
START = dt.date(2026, 11, 1)

_SQLITE_TRANSFERS = """
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :rows)
INSERT INTO transfer (reference, provider_reference, origin, status, confirmed, amount, fee,
    provider_amount, provider_fee, provider_status, check_attempts, not_found_count,
    event_sequence, created_at, updated_at)
SELECT 'bench-t-' || i, 'TRF_' || printf('%012d', i), 'initiated', 'successful', 1,
    10000 + (i * 7919) % 5000000, 1075, 10000 + (i * 7919) % 5000000, 1075, 'successful',
    0, 0, 0, c, c
FROM (SELECT i, datetime('2026-11-01 00:00:00', '+' || ((i - 1) * :step) || ' seconds') AS c
      FROM n)
"""
_POSTGRES_TRANSFERS = """
INSERT INTO transfer (reference, provider_reference, origin, status, confirmed, amount, fee,
    provider_amount, provider_fee, provider_status, check_attempts, not_found_count,
    event_sequence, created_at, updated_at)
SELECT 'bench-t-' || i, 'TRF_' || lpad(i::text, 12, '0'), 'initiated', 'successful', true,
    10000 + (i * 7919) % 5000000, 1075, 10000 + (i * 7919) % 5000000, 1075, 'successful',
    0, 0, 0, c, c
FROM (SELECT i, timestamptz '2026-11-01 00:00:00+00' + ((i - 1) * :step) * interval '1 second'
      AS c FROM generate_series(1::bigint, :rows) AS i) AS s
"""


def _step(rows: int) -> float:
    # Seconds between payouts so the month holds them all, starting at midnight UTC (01:00
    # in Lagos: every payout's Lagos day is its UTC day).
    return (DAYS * 86400 - 7200) / rows


def build_ledger(engine: Engine, rows: int) -> float:
    """The transfers, written by the database itself; seconds taken."""
    started = time.perf_counter()
    step = _step(rows)
    sql = _POSTGRES_TRANSFERS if engine.dialect.name == "postgresql" else _SQLITE_TRANSFERS
    with engine.begin() as connection:
        connection.execute(text(sql), {"rows": rows, "step": step})
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("ANALYZE transfer"))
    return time.perf_counter() - started


def _naira(kobo: int) -> str:
    return f"{kobo // 100:,}.{kobo % 100:02d}"


def write_statement(path: Path, rows: int) -> int:
    """The month's wallet statement, two lines per payout; the number of lines."""
    step = _step(rows)
    balance = 10**13  # ₦100bn opening: never overdrawn
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(
            ["Date", "Value Date", "Reference", "Narration", "Debit", "Credit", "Balance"]
        )
        for i in range(1, rows + 1):
            day = (
                (dt.datetime(2026, 11, 1) + dt.timedelta(seconds=(i - 1) * step)).date().isoformat()
            )
            amount = 10000 + (i * 7919) % 5000000
            reference = f"TRF_{i:012d}"
            balance -= amount
            narration = f"Transfer to 0440000017 Access Bank / bench-t-{i}"
            writer.writerow([day, day, reference, narration, _naira(amount), "", _naira(balance)])
            balance -= FEE
            fee_row = [day, day, reference, f"Fee: {reference}", _naira(FEE), "", _naira(balance)]
            writer.writerow(fee_row)
    return rows * 2


_CHILD_IMPORT = """
import datetime as dt, json, resource, sys, time
from pathlib import Path
from sqlmodel import Session
from ledger.db import create_db_engine
from reconcile.statements.importer import ImportOptions, import_statement
from statements.formats import StatementFormat
engine = create_db_engine(sys.argv[1])
options = ImportOptions(format=StatementFormat.CSV, mapping="sandbox", max_bytes=2**40)
started = time.perf_counter()
with Session(engine) as session:
    summary = import_statement(session, Path(sys.argv[2]), options, now=dt.datetime.now(dt.UTC))
    session.commit()
seconds = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss, "new": summary.new,
                  "matched": summary.to_json()["matched"]}))
"""

_CHILD_BASELINE = """
import csv, json, resource, sys, time
from sqlalchemy import text
from ledger.db import create_db_engine
engine = create_db_engine(sys.argv[1])
postgres = engine.dialect.name == "postgresql"
def kobo(value):
    if not value:
        return None
    whole, _, part = value.replace(",", "").partition(".")
    return int(whole) * 100 + int(part or 0)
with engine.begin() as connection:
    connection.execute(text("DROP TABLE IF EXISTS baseline_line"))
    connection.execute(text(
        "CREATE TABLE baseline_line (id BIGINT PRIMARY KEY, account_id BIGINT NOT NULL,"
        " identity VARCHAR(64) NOT NULL, date DATE NOT NULL, value_date DATE, amount BIGINT"
        " NOT NULL, direction VARCHAR(8) NOT NULL, balance BIGINT, reference TEXT NOT NULL,"
        " narration TEXT NOT NULL, import_id BIGINT NOT NULL, file_line BIGINT NOT NULL,"
        " position BIGINT NOT NULL, state VARCHAR(16) NOT NULL)"))
started = time.perf_counter()
mark = "%s" if postgres else "?"
sql = "INSERT INTO baseline_line VALUES (" + ", ".join([mark] * 14) + ")"
with engine.begin() as connection:
    cursor = connection.connection.dbapi_connection.cursor()
    with open(sys.argv[2], newline="", encoding="utf-8") as file:
        reader = csv.reader(file)
        next(reader)
        batch = []
        for number, row in enumerate(reader, start=2):
            debit = kobo(row[4])
            amount, direction = (debit, "debit") if debit else (kobo(row[5]), "credit")
            batch.append((number, 1, str(number), row[0], row[1] or None, amount, direction,
                          kobo(row[6]), row[2], row[3], 1, number, number, "unmatched"))
            if len(batch) == 5000:
                cursor.executemany(sql, batch)
                batch = []
        if batch:
            cursor.executemany(sql, batch)
seconds = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss}))
"""


def _child(code: str, url: str, path: Path) -> dict[str, Any]:
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    out = subprocess.run(
        [sys.executable, "-c", code, url, str(path)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=6 * 3600,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


_CHILD_TIE_OUT = """
import datetime as dt, json, resource, sys, time
from sqlmodel import Session
from ledger.db import create_db_engine
from reconcile.statements.period import period_tie_out
engine = create_db_engine(sys.argv[1])
started = time.perf_counter()
with Session(engine) as session:
    result = period_tie_out(session, "provider-wallet", dt.date(2026, 11, 1), dt.date(2026, 11, 30))
seconds = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss, "tied_out": result.tied_out,
                  "residual": result.residual}))
"""


# 4. The reconcile pass's matching over the imported month: 100 new open lines (half naming
#    a transfer already matched — a duplicate, which stays unmatched — half naming nothing,
#    with a transfer's amount: candidates by amount and date), then `match_statements`, the
#    step every reconcile pass runs, three times; the slowest pass is reported.
_CHILD_PASS = """
import datetime as dt, json, resource, sys, time, types
from sqlalchemy import text
from ledger.db import create_db_engine
from reconcile.statements.passes import match_statements
engine = create_db_engine(sys.argv[1])
with engine.begin() as c:
    account, import_id, top = c.execute(text(
        "SELECT account_id, import_id, id FROM statement_line ORDER BY id DESC LIMIT 1")).one()
    transfers = c.execute(text(
        "SELECT provider_reference, amount FROM transfer ORDER BY id DESC LIMIT 100")).all()
    for n, (reference, amount) in enumerate(transfers, start=1):
        named = n % 2 == 0
        c.execute(text(
            "INSERT INTO statement_line (id, account_id, identity, date, amount, direction,"
            " reference, narration, import_id, file_line, position, state, reversal_pending,"
            " event_sequence) VALUES (:id, :a, :i, :d, :m, 'debit', :r, :n, :imp, :p, :p,"
            " 'unmatched', :f, 0)"),
            {"id": top + n, "a": account, "i": f"pass-{n}", "d": dt.date(2026, 11, 30),
             "m": amount, "r": reference if named else f"UNKNOWN-{n:04d}",
             "n": "duplicate" if named else "no reference", "imp": import_id,
             "p": 10**9 + n, "f": False})
settings = types.SimpleNamespace(statement_date_window=dt.timedelta(days=2))
times, result = [], None
for _ in range(3):
    started = time.perf_counter()
    result = match_statements(engine, settings, now=dt.datetime.now(dt.UTC))
    times.append(time.perf_counter() - started)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(json.dumps({"seconds": max(times), "times": times, "result": result, "rss_mb": rss}))
"""


def _postgres_url() -> str:
    from tests.support.databases import PostgresFactory

    return PostgresFactory().new()


def run(backend: str, rows: int, folder: Path) -> str:
    """One backend's figures, as a Markdown table row."""
    if backend == "sqlite":
        url = f"sqlite:///{folder}/bench-{rows}.db"
        upgrade(url)
    else:
        url = _postgres_url()
    engine = create_db_engine(url)
    try:
        built = build_ledger(engine, rows)
    finally:
        engine.dispose()
    path = folder / f"statement-{rows}.csv"
    if not path.exists():
        write_statement(path, rows)
    lines = rows * 2
    baseline = _child(_CHILD_BASELINE, url, path)
    imported = _child(_CHILD_IMPORT, url, path)
    # Every measurement in a child of its own: Linux carries a process's peak RSS across
    # fork and exec, so a child forked by a parent that had grown would report the parent's.
    tied_out = _child(_CHILD_TIE_OUT, url, path)
    tie_seconds, tied, residual = tied_out["seconds"], tied_out["tied_out"], tied_out["residual"]
    passed = _child(_CHILD_PASS, url, path)
    ours, base = lines / imported["seconds"], lines / baseline["seconds"]
    print(
        f"{backend}: ledger built in {built:.1f} s; {imported}; baseline {baseline};"
        f" tie-out {tied_out}; reconcile pass {passed}",
        flush=True,
    )
    return (
        f"| {backend} | {rows:,} | {lines:,} | {ours:,.0f} lines/s ({imported['seconds']:.1f} s)"
        f" | {base:,.0f} lines/s ({baseline['seconds']:.1f} s) | {ours / base:.2f}×"
        f" | {imported['rss_mb']} MB | {imported['matched']:,} | {tie_seconds:.1f} s"
        f" ({'ties out' if tied else f'residual {residual}'}) |"
        f" {passed['seconds']:.2f} s ({passed['result'].get('considered', 0)} lines) |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    header = (
        "| database | transfers | lines | import (parse, validate, store, match) | baseline"
        " (csv module + bulk insert) | ratio | peak RSS | matched | tie-out |"
        " reconcile pass (100 new lines) |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-statements-") as folder:
        for backend in backends:
            rows.append(run(backend, args.transfers, Path(folder)))
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    report = "\n".join([header, *rows, "", machine])
    print(report)
    if args.results:
        args.results.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
