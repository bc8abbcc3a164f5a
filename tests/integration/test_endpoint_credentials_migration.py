"""Migration 0014 (broker credentials sealed) keeps a 0013 ledger's endpoints, and its downgrade
removes broker endpoints rather than leave them without their credentials."""

from __future__ import annotations

import datetime as dt

from alembic import command
from sqlalchemy import Engine, inspect, text

from ledger.db import create_db_engine
from ledger.migrate import alembic_config, current, upgrade

NOW = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)


def test_upgrade_from_0013_keeps_endpoints_and_adds_the_sealed_credentials(
    database_url: str, engine: Engine
) -> None:
    """An HTTP endpoint of 0013 is the same after the upgrade, with no credentials."""
    command.downgrade(alembic_config(database_url), "0013")
    old = create_db_engine(database_url)
    stamp = NOW.replace(tzinfo=None) if old.dialect.name == "sqlite" else NOW
    assert "credentials_sealed" not in {
        column["name"] for column in inspect(old).get_columns("relay_endpoint")
    }
    with old.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO relay_endpoint (id, url, enabled, secret_sealed, created_at,"
                " updated_at) VALUES (4, 'http://10.0.0.7/hook', true, 'sealed', :t, :t)"
            ),
            {"t": stamp},
        )
    old.dispose()
    upgrade(database_url, revision="0014")
    assert current(database_url) == "0014"
    with engine.connect() as connection:
        row = connection.execute(
            text("SELECT id, url, enabled, secret_sealed, credentials_sealed FROM relay_endpoint")
        ).one()
    assert tuple(row) == (4, "http://10.0.0.7/hook", True, "sealed", None)


def test_downgrade_to_0013_removes_broker_endpoints_and_keeps_http_ones(
    database_url: str, engine: Engine
) -> None:
    """Back at 0013 a broker endpoint is removed (its history stays); an HTTP one is kept."""
    stamp = NOW.replace(tzinfo=None) if engine.dialect.name == "sqlite" else NOW
    with engine.begin() as connection:
        for number, url in ((1, "http://10.0.0.7/hook"), (2, "amqp://10.0.0.9/?exchange=x")):
            connection.execute(
                text(
                    "INSERT INTO relay_endpoint (id, url, enabled, secret_sealed,"
                    " credentials_sealed, created_at, updated_at)"
                    " VALUES (:id, :url, true, 'sealed', 'creds', :t, :t)"
                ),
                {"id": number, "url": url, "t": stamp},
            )
    engine.dispose()
    command.downgrade(alembic_config(database_url), "0013")
    old = create_db_engine(database_url)
    with old.connect() as connection:
        rows = connection.execute(
            text("SELECT id, enabled, removed_at IS NOT NULL FROM relay_endpoint ORDER BY id")
        ).all()
    old.dispose()
    assert [tuple(row) for row in rows] == [(1, True, False), (2, False, True)]
    upgrade(database_url, revision="0014")
    assert current(database_url) == "0014"
