"""Alembic environment: the ledger's metadata, the URL handed in by `ledger.migrate`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text
from sqlmodel import SQLModel

import ledger.models  # noqa: F401  (registers the tables on the metadata)
from ledger.db import create_db_engine

config = context.config
target_metadata = SQLModel.metadata


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_db_engine(str(config.get_main_option("sqlalchemy.url")))
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


MIGRATION_LOCK = 7_271_905  # any constant shared by every payrecon process


def _run(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # Two replicas' init containers may migrate at once: one waits for the other.
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()
    try:
        _migrate(connection)
    finally:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
            connection.commit()


def _migrate(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite cannot ALTER most things; batch mode copies the table
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
