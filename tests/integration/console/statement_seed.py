"""A ledger with an imported wallet statement for the statements and periods pages: the
sample statement (docs/statements/sandbox.csv) and its ledger, plus a line with no reference
that the matcher suggests for a transfer of its amount, and one it cannot place."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import Engine, select
from sqlmodel import Session, col

from ledger.db import write_session
from ledger.models import StatementLine
from reconcile.statements.importer import ImportOptions, import_statement
from statements.formats import StatementFormat
from tests.integration.statements.ledger_rows import add_transfer, sample_ledger

NOW = dt.datetime(2026, 11, 6, 10, 0, tzinfo=dt.UTC)
# The sample statement (a funding, inv-1001 paid, order-77 collected, inv-1002 refunded) and
# two lines after it: a debit of inv-1003's amount with no reference (suggested), and a bank
# charge the ledger knows nothing of (unmatched).
ROWS = [
    '2026-11-05,2026-11-05,,Transfer to 0005550001 Sample Bank,"7,500.00",,"1,529,228.50"',
    '2026-11-05,2026-11-05,CHG-77,<b>SMS charges</b>,40.00,,"1,529,188.50"',
]


def seed_statement(engine: Engine, tmp_path: Path) -> dict[str, int]:
    """The ledger and the imported statement; the ids of the suggested, the unmatched and the
    funding line."""
    sample_ledger(engine)
    with Session(engine) as session:
        add_transfer(
            session,
            "inv-1003",
            "TRF_AAAABBBBCCCCDDDD",
            750_000,
            0,
            "successful",
            dt.datetime(2026, 11, 5, 11, 0, tzinfo=dt.UTC),
        )
        session.commit()
    sample = Path(__file__).resolve().parents[3] / "docs" / "statements" / "sandbox.csv"
    path = tmp_path / "wallet-november.csv"
    path.write_text(
        sample.read_text(encoding="utf-8") + "".join(row + "\n" for row in ROWS), encoding="utf-8"
    )
    options = ImportOptions(format=StatementFormat.CSV, mapping="sandbox", actor="cli:test")
    with write_session(engine) as session:
        import_statement(session, path, options, now=NOW)
    with Session(engine) as session:
        lines = list(
            session.execute(select(StatementLine).order_by(col(StatementLine.id))).scalars()
        )
    by_state: dict[str, list[int]] = {}
    for line in lines:
        by_state.setdefault(line.state, []).append(line.id or 0)
    assert len(by_state.get("suggested", [])) == 1, by_state
    funding = next(line.id for line in lines if line.reference.startswith("FND_"))
    charge = next(line.id for line in lines if line.reference == "CHG-77")
    return {
        "suggested": by_state["suggested"][0],
        "charge": charge or 0,
        "funding": funding or 0,
        "lines": len(lines),
    }
