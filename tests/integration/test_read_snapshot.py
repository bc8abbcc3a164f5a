"""A read session sees one snapshot of the ledger, whatever commits while it reads."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Engine, func, select, update

from ledger.db import read_session, write_session
from ledger.models import Transfer
from tests.integration.reports.ledgers import Spec, insert_ledger

START = dt.datetime(2025, 3, 1, 9, tzinfo=dt.UTC)


def test_a_read_session_does_not_see_a_write_committed_while_it_reads(engine: Engine) -> None:
    """A transfer read in two statements keeps its first snapshot across a concurrent commit."""
    insert_ledger(engine, [Spec("SNAP-1", "pending", START, 100_000, 1075)])
    with read_session(engine) as session:
        first = session.execute(select(Transfer.status)).scalar_one()
        with write_session(engine) as writer:
            writer.execute(update(Transfer).values(status="successful"))
        insert_ledger(engine, [Spec("SNAP-2", "pending", START, 100_000, 1075)])
        again = session.execute(select(Transfer.status).where(Transfer.reference == "SNAP-1"))
        count = session.execute(select(func.count()).select_from(Transfer)).scalar_one()
        assert (first, again.scalar_one(), count) == ("pending", "pending", 1)
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Transfer)).scalar_one() == 2
