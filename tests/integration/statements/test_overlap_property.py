"""Hypothesis on SQLite: any exports of the sample that start at the start of a day, imported
in any order, store each movement once (and all of them once every day is covered)."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlmodel import Session

from ledger.db import create_db_engine
from ledger.models import StatementLine
from reconcile.statements.importer import ImportOptions, import_statement
from statements.formats import StatementFormat
from tests.integration.statements.ledger_rows import SAMPLE, write_csv
from tests.support.databases import SqliteFactory

ROWS = SAMPLE.read_text().splitlines()[1:]
DAY_STARTS = (0, 3, 6)  # the sample's first line of each day
_names = itertools.count()

exports = st.lists(
    st.tuples(st.sampled_from(DAY_STARTS), st.integers(1, len(ROWS))).map(
        lambda pair: (pair[0], max(pair[0] + 1, pair[1]))
    ),
    min_size=1,
    max_size=5,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(spans=exports)
def test_overlapping_exports_in_any_order_store_each_movement_once(
    sqlite_factory: SqliteFactory, tmp_path: Path, spans: list[tuple[int, int]]
) -> None:
    """The stored lines are exactly the union of the exports' lines, each once."""
    engine = create_db_engine(sqlite_factory.new())
    account = f"wallet-{next(_names)}"
    options = ImportOptions(account=account, format=StatementFormat.CSV, mapping="sandbox")
    try:
        for number, (start, end) in enumerate(spans):
            path = write_csv(tmp_path / f"{account}-{number}.csv", ROWS[start:end])
            with Session(engine) as session:
                import_statement(session, path, options, now=dt.datetime.now(dt.UTC))
                session.commit()
        covered = set().union(*(range(start, end) for start, end in spans))
        with Session(engine) as session:
            stored = session.execute(select(func.count()).select_from(StatementLine)).scalar()
        assert stored == len(covered)
    finally:
        engine.dispose()
