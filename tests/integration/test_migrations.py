"""The Alembic migrations build exactly the tables the models describe, and can be undone."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect
from sqlmodel import SQLModel

import ledger.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from ledger.db import create_db_engine
from ledger.migrate import alembic_config, current, head_revision, upgrade


def test_migrated_schema_matches_the_models(engine: Engine) -> None:
    """After `db upgrade` the database differs from the models in nothing Alembic can see."""
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), SQLModel.metadata)
    assert differences == []


def test_migrations_downgrade_to_nothing_and_upgrade_again(database_url: str) -> None:
    """Every migration has a working downgrade, and the head can be rebuilt after it."""
    command.downgrade(alembic_config(database_url), "base")
    engine = create_db_engine(database_url)
    try:
        assert "transfer" not in inspect(engine).get_table_names()
    finally:
        engine.dispose()
    upgrade(database_url)
    assert current(database_url) == head_revision()
    engine = create_db_engine(database_url)
    try:
        indexes = {index["name"] for index in inspect(engine).get_indexes("webhook_event")}
    finally:
        engine.dispose()
    assert "ix_webhook_event_reference" in indexes
