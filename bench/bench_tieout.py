"""The period tie-out alone at scale, on a month of matched lines written by SQL.

Run: .venv/bin/python bench/bench_tieout.py URL [--transfers 1000000] [--build] [--vacuum]
     [--runs 3]

`bench_statements.py` imports the month's statement through Python (minutes at full size);
this builds the same ledger and the same lines as that import stores — per payout a matched
debit of its amount (`payout_amount`) and of its fee (`payout_fee`), the balance chained, in
one `statement_import` of the account `provider-wallet` — in one INSERT … SELECT, so the
tie-out can be measured again and again (bench/RESULTS.md §18). `URL` names an existing
database, migrated here; `--build` writes the month into it (it must hold no ledger yet) and
refreshes the planner's statistics as the import does (`ledger.statistics`). `--vacuum`
(PostgreSQL) then does what autovacuum does to a table that grew by a fifth: VACUUM, which
marks the pages all-visible, so index-only scans stop reading the table. Each run of
`period_tie_out` is a fresh process.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_statements import _CHILD_TIE_OUT, FEE, build_ledger
from sqlalchemy import Engine, text
from sqlmodel import Session

from ledger.db import create_db_engine
from ledger.migrate import upgrade
from ledger.statistics import analyze_if_grown

OPENING = 10**13  # ₦100bn, as bench_statements.write_statement: never overdrawn

# Two lines per transfer in statement order (n), the balance the running sum of the debits.
# The day is the payout's UTC day, as in the CSV bench_statements writes.
_LINES = """
INSERT INTO statement_line (account_id, identity, date, value_date, amount, direction, balance,
    reference, narration, import_id, file_line, position, state, transfer_id, role,
    matched_by, matched_at, reversal_pending, event_sequence)
SELECT :account, 'sql-' || n, day, day, m, 'debit',
    :opening - sum(m) OVER (ORDER BY n ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
    provider_reference, narration, :import, n + 1, n + 1, 'matched', id, role,
    'payrecon', :now, {false}, 0
FROM (
    SELECT t.id, t.provider_reference, {day} AS day, 2 * t.id - 1 + k AS n,
        CASE WHEN k = 0 THEN t.amount ELSE t.fee END AS m,
        CASE WHEN k = 0 THEN 'payout_amount' ELSE 'payout_fee' END AS role,
        CASE WHEN k = 0 THEN 'Transfer to 0440000017 Access Bank / ' || t.reference
            ELSE 'Fee: ' || t.provider_reference END AS narration
    FROM transfer t CROSS JOIN (SELECT 0 AS k UNION ALL SELECT 1) AS r
) AS s
"""
_DAY = {
    "postgresql": "CAST(t.created_at AT TIME ZONE 'UTC' AS date)",
    "sqlite": "date(t.created_at)",
}


def build_lines(engine: Engine, rows: int) -> float:
    """The account, its one import and the month's 2 × `rows` matched lines; seconds taken."""
    started = time.perf_counter()
    dialect = engine.dialect.name
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as c:
        account = c.execute(
            text(
                "INSERT INTO statement_account (name, kind, created_at)"
                " VALUES ('provider-wallet', 'wallet', :now) RETURNING id"
            ),
            {"now": now},
        ).scalar_one()
        total = c.execute(text("SELECT sum(amount) + count(*) * :fee FROM transfer"), {"fee": FEE})
        closing = OPENING - int(total.scalar_one())
        import_id = c.execute(
            text(
                "INSERT INTO statement_import (account_id, file_name, format, mapping, sha256,"
                " size, read, new, already_known, invalid, matched, suggested, unmatched,"
                " first_date, last_date, opening_balance, closing_balance, balance_breaks,"
                " reversals, locked_periods, imported_by, imported_at) VALUES (:account,"
                " 'by-sql.csv', 'csv', 'sandbox', :sha, 0, :lines, :lines, 0, 0, :lines, 0, 0,"
                " :first, :last, :opening, :closing, '[]', '[]', '[]', 'bench', :now)"
                " RETURNING id"
            ),
            {
                "account": account,
                "sha": "0" * 64,
                "lines": 2 * rows,
                "first": dt.date(2026, 11, 1),
                "last": dt.date(2026, 11, 30),
                "opening": OPENING,
                "closing": closing,
                "now": now,
            },
        ).scalar_one()
        sql = _LINES.format(day=_DAY[dialect], false="false" if dialect == "postgresql" else "0")
        parameters = {"account": account, "import": import_id, "opening": OPENING, "now": now}
        c.execute(text(sql), parameters)
    with Session(engine) as session:
        analyze_if_grown(session, "statement_line", 2 * rows)
        session.commit()
    return time.perf_counter() - started


def vacuum(engine: Engine) -> float:
    """What autovacuum does to the freshly written tables (PostgreSQL); seconds taken."""
    started = time.perf_counter()
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
            c.execute(text("VACUUM (ANALYZE) transfer, statement_line"))
    return time.perf_counter() - started


def tie_out(url: str) -> dict[str, object]:
    """`period_tie_out` of November 2026 in a fresh process."""
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", _CHILD_TIE_OUT, url, ""],
        check=True,
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": root},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--transfers", type=int, default=1_000_000)
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--vacuum", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    upgrade(args.url)
    engine = create_db_engine(args.url)
    try:
        if args.build:
            ledger = build_ledger(engine, args.transfers)
            lines = build_lines(engine, args.transfers)
            print(f"built: ledger {ledger:.1f} s, lines {lines:.1f} s", flush=True)
        if args.vacuum:
            print(f"vacuumed: {vacuum(engine):.1f} s", flush=True)
    finally:
        engine.dispose()
    for _ in range(args.runs):
        print(json.dumps(tie_out(args.url)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
