"""Migration 0012 gives relay events a nullable trace context and keeps a 0011 ledger's events."""

from __future__ import annotations

import datetime as dt

from alembic import command
from sqlalchemy import inspect, text

from ledger.db import create_db_engine
from ledger.migrate import alembic_config, current, upgrade

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
TRACEPARENT = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"


def test_upgrade_to_0012_keeps_events_and_adds_an_empty_traceparent(database_url: str) -> None:
    """Events written at 0011 come through with no trace context; a traced event written at
    0012 keeps its own, and going down to 0011 drops the column and keeps the events."""
    command.downgrade(alembic_config(database_url), "0011")
    engine = create_db_engine(database_url)
    stamp = NOW.replace(tzinfo=None) if engine.dialect.name == "sqlite" else NOW
    insert = text(
        "INSERT INTO relay_event (id, event_id, type, subject, subject_id, reference, sequence,"
        " body, created_at) VALUES (:id, :event, 'transfer.reported', 'transfer', 1, 'R1', :id,"
        " '{}', :now)"
    )
    try:
        with engine.begin() as connection:
            connection.execute(insert, {"id": 1, "event": "evt_old", "now": stamp})
        upgrade(database_url, revision="0012")
        assert current(database_url) == "0012"
        with engine.begin() as connection:
            connection.execute(insert, {"id": 2, "event": "evt_new", "now": stamp})
            connection.execute(
                text("UPDATE relay_event SET traceparent = :tp WHERE id = 2"), {"tp": TRACEPARENT}
            )
            rows = connection.execute(
                text("SELECT event_id, traceparent FROM relay_event ORDER BY id")
            ).all()
        assert [tuple(r) for r in rows] == [("evt_old", None), ("evt_new", TRACEPARENT)]
        command.downgrade(alembic_config(database_url), "0011")
        engine.dispose()
        columns = {column["name"] for column in inspect(engine).get_columns("relay_event")}
        assert "traceparent" not in columns
        with engine.connect() as connection:
            kept = connection.execute(text("SELECT event_id FROM relay_event ORDER BY id")).all()
        assert [r[0] for r in kept] == ["evt_old", "evt_new"]
    finally:
        engine.dispose()
