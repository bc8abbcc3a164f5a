"""The planner's statistics of a table grown in bulk: PostgreSQL's ANALYZE, run by the write
that grew it instead of left to autovacuum's next round."""

from __future__ import annotations

from sqlalchemy import text
from sqlmodel import Session

# PostgreSQL plans each query from what ANALYZE last counted of a table. Autovacuum counts
# again once a tenth of a table is new, but only on its next round (a minute later at best,
# later when it is busy, never where it is off): a month of statement lines imported and its
# period closed straight away was planned as if the lines were not there — two million lines
# sorted on disk, the sums' pass on one core, twice the time (bench/RESULTS.md §18). A write
# at least this large, and at least a tenth of the table as last counted, counts it again.
ANALYZE_AFTER_ROWS = 10_000
_GROWTH = 0.1
_COUNTED = "SELECT reltuples FROM pg_class WHERE oid = CAST(:table AS regclass)"


def analyze_if_grown(session: Session, table: str, added: int) -> bool:
    """ANALYZE `table` on PostgreSQL when the `added` rows just written in `session`'s
    transaction are ANALYZE_AFTER_ROWS or more and a tenth or more of what it held when last
    counted (never: -1); True when it did."""
    if added < ANALYZE_AFTER_ROWS or session.get_bind().dialect.name != "postgresql":
        return False
    counted = float(session.execute(text(_COUNTED), {"table": table}).scalar_one())
    if added < _GROWTH * counted:
        return False
    # In the writer's transaction: ANALYZE samples the rows this transaction inserted; its
    # lock, held to the commit, makes only another ANALYZE or VACUUM of the table wait. A
    # rollback (a dry run) keeps the row count, which PostgreSQL writes in place: the planner
    # scales it by the table's size on disk, which the rolled-back rows still take up.
    session.execute(text(f"ANALYZE {table}"))
    return True
