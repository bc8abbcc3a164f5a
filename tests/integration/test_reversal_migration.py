"""Migration 0011 (reversals) keeps a 0010 ledger's transfers and adds the reversal columns."""

from __future__ import annotations

import datetime as dt

from alembic import command
from sqlalchemy import text

from ledger.db import create_db_engine
from ledger.migrate import alembic_config, current, upgrade

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def test_upgrade_to_0011_keeps_transfers_and_starts_no_reverification(database_url: str) -> None:
    """Transfers of 0010 come through unchanged, with no re-verification done and no reversal;
    a reversed transfer goes back to successful on the way down."""
    command.downgrade(alembic_config(database_url), "0010")
    engine = create_db_engine(database_url)
    stamp = NOW.replace(tzinfo=None) if engine.dialect.name == "sqlite" else NOW
    try:
        with engine.begin() as connection:
            for number, status in ((1, "successful"), (2, "pending")):
                connection.execute(
                    text(
                        "INSERT INTO transfer (id, reference, origin, status, confirmed, amount,"
                        " fee, check_attempts, not_found_count, event_sequence, created_at,"
                        " updated_at) VALUES (:id, :ref, 'expected', :status, true, :amount, 50,"
                        " 0, 0, 1, :now, :now)"
                    ),
                    {
                        "id": number,
                        "ref": f"OLD-{number}",
                        "status": status,
                        "amount": 1000 * number,
                        "now": stamp,
                    },
                )
        upgrade(database_url, revision="0011")
        assert current(database_url) == "0011"
        with engine.begin() as connection:
            rows = connection.execute(
                text(
                    "SELECT reference, status, amount, event_sequence, reverify_done, reversed_at,"
                    " reversal_reason, reversal_source FROM transfer ORDER BY id"
                )
            ).all()
            connection.execute(
                text(
                    "UPDATE transfer SET status = 'reversed', reversed_at = :now,"
                    " reversal_source = 'lookup' WHERE id = 1"
                ),
                {"now": stamp},
            )
        assert [tuple(r) for r in rows] == [
            ("OLD-1", "successful", 1000, 1, 0, None, None, None),
            ("OLD-2", "pending", 2000, 1, 0, None, None, None),
        ]
        command.downgrade(alembic_config(database_url), "0010")
        with engine.connect() as connection:
            statuses = connection.execute(text("SELECT status FROM transfer ORDER BY id")).all()
        assert [r[0] for r in statuses] == ["successful", "pending"]
    finally:
        engine.dispose()
