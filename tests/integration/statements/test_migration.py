"""Migration 0008 (statements) keeps a 0007 ledger's transfers and collections and gives them
the upper-cased reference keys the matcher looks up."""

from __future__ import annotations

import datetime as dt

from alembic import command
from sqlalchemy import inspect, text

from ledger.db import create_db_engine
from ledger.migrate import alembic_config, current, upgrade

NOW = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)


def test_upgrade_from_0007_keeps_data_and_computes_keys(database_url: str) -> None:
    """A transfer and a collection of 0007 are there after the upgrade, with their keys."""
    command.downgrade(alembic_config(database_url), "0007")
    engine = create_db_engine(database_url)
    stamp = NOW.replace(tzinfo=None) if engine.dialect.name == "sqlite" else NOW
    try:
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO transfer (id, reference, provider_reference, origin, status,"
                    " confirmed, amount, fee, check_attempts, not_found_count, event_sequence,"
                    " created_at, updated_at) VALUES (1, 'inv-1', 'trf_ab12', 'expected',"
                    " 'successful', true, 1000, 50, 0, 0, 0, :now, :now)"
                ),
                {"now": stamp},
            )
            connection.execute(
                text(
                    "INSERT INTO collection (id, reference, origin, status, confirmed, amount,"
                    " final_check_done, check_attempts, not_found_count, event_sequence,"
                    " created_at, updated_at) VALUES (1, 'ord-7', 'created', 'pending', false,"
                    " 5000, false, 0, 0, 0, :now, :now)"
                ),
                {"now": stamp},
            )
        upgrade(database_url, revision="0008")
        assert current(database_url) == "0008"
        with engine.connect() as connection:
            transfer = connection.execute(
                text(
                    "SELECT reference, amount, reference_key, provider_reference_key FROM transfer"
                )
            ).one()
            collection = connection.execute(
                text("SELECT reference, reference_key, provider_reference_key FROM collection")
            ).one()
        assert tuple(transfer) == ("inv-1", 1000, "INV-1", "TRF_AB12")
        assert tuple(collection) == ("ord-7", "ORD-7", None)
        tables = set(inspect(engine).get_table_names())
        assert {"statement_account", "statement_import", "statement_line", "period_lock"} <= tables
    finally:
        engine.dispose()
