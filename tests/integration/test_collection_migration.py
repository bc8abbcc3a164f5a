"""Migration 0004 (collections) keeps what a 0003 ledger holds and adds collection findings."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
import sqlalchemy.exc
from alembic import command
from sqlalchemy import text

from ledger.db import create_db_engine
from ledger.migrate import alembic_config, current, upgrade

NOW = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def old_ledger(database_url: str) -> Iterator[str]:
    """A ledger taken back to 0003 holding two transfers and a finding on one of them."""
    command.downgrade(alembic_config(database_url), "0003")
    engine = create_db_engine(database_url)
    stamp = NOW.replace(tzinfo=None) if engine.dialect.name == "sqlite" else NOW
    with engine.begin() as connection:
        for number in (1, 2):
            connection.execute(
                text(
                    "INSERT INTO transfer (id, reference, origin, status, confirmed, amount, fee,"
                    " check_attempts, not_found_count, event_sequence, created_at, updated_at)"
                    " VALUES (:id, :ref, 'expected', 'pending', false, :amount, 50, 0, 0, 0,"
                    " :now, :now)"
                ),
                {"id": number, "ref": f"OLD-{number}", "amount": 1000 * number, "now": stamp},
            )
        connection.execute(
            text(
                "INSERT INTO finding (id, transfer_id, kind, detail, opened_at, updated_at)"
                " VALUES (7, 2, 'stale_pending', 'old one', :now, :now)"
            ),
            {"now": stamp},
        )
    engine.dispose()
    yield database_url


def test_upgrade_to_0004_keeps_transfers_and_findings(old_ledger: str) -> None:
    """After the upgrade every transfer and finding of 0003 is there, unchanged."""
    upgrade(old_ledger, revision="0004")
    assert current(old_ledger) == "0004"
    engine = create_db_engine(old_ledger)
    try:
        with engine.connect() as connection:
            transfers = connection.execute(
                text("SELECT reference, amount FROM transfer ORDER BY id")
            ).all()
            findings = connection.execute(
                text("SELECT id, transfer_id, collection_id, kind, detail FROM finding")
            ).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in transfers] == [("OLD-1", 1000), ("OLD-2", 2000)]
    assert [tuple(row) for row in findings] == [(7, 2, None, "stale_pending", "old one")]


def test_a_finding_names_exactly_one_subject(old_ledger: str) -> None:
    """After the upgrade a finding with neither a transfer nor a collection is refused."""
    upgrade(old_ledger)
    engine = create_db_engine(old_ledger)
    try:
        with pytest.raises(sqlalchemy.exc.IntegrityError), engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO finding (kind, detail, opened_at, updated_at)"
                    " VALUES ('underpaid', 'x', :now, :now)"
                ),
                {"now": NOW.replace(tzinfo=None)},
            )
    finally:
        engine.dispose()
