"""Migration 0009 (alerts that group) keeps a 0008 ledger's alerts and gives none of them a
resolved notice after the upgrade."""

from __future__ import annotations

import datetime as dt

from alembic import command
from sqlalchemy import Engine, text

from ledger.db import create_db_engine
from ledger.migrate import alembic_config, current, upgrade
from reconcile.alert_plan import AlertRules
from reconcile.alerts import dispatch_alerts
from reconcile.checks import Policy

NOW = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)


def test_upgrade_to_0009_keeps_alerts_and_sends_no_old_resolved_notice(
    database_url: str, engine: Engine
) -> None:
    """Alerts of 0008 survive, and their long-resolved findings page nobody after the upgrade."""
    command.downgrade(alembic_config(database_url), "0008")
    old = create_db_engine(database_url)
    stamp = NOW.replace(tzinfo=None) if old.dialect.name == "sqlite" else NOW
    with old.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO transfer (id, reference, origin, status, confirmed, amount, fee,"
                " check_attempts, not_found_count, event_sequence, created_at, updated_at)"
                " VALUES (1, 'OLD-1', 'expected', 'successful', true, 100, 5, 0, 0, 0, :t, :t)"
            ),
            {"t": stamp},
        )
        connection.execute(
            text(
                "INSERT INTO finding (id, transfer_id, kind, detail, opened_at, resolved_at,"
                " updated_at) VALUES (3, 1, 'amount_mismatch', 'old', :t, :t, :t)"
            ),
            {"t": stamp},
        )
        connection.execute(
            text(
                "INSERT INTO alert (id, key, finding_id, step, title, body, status, created_at,"
                " sent_at) VALUES (9, 'finding:3:1:0', 3, 0, 'old title', 'old body', 'sent',"
                " :t, :t)"
            ),
            {"t": stamp},
        )
    old.dispose()
    upgrade(database_url)  # 0009, then the later migrations to the head
    assert current(database_url) == "0012"
    with engine.connect() as connection:
        row = connection.execute(
            text("SELECT key, title, status, group_id, resolved_notice_at FROM alert")
        ).one()
    assert row[:4] == ("finding:3:1:0", "old title", "sent", None)
    assert row[4] is not None
    policy = Policy(0, 0, 3, 100, alerting=AlertRules())
    assert dispatch_alerts(engine, None, now=NOW + dt.timedelta(days=1), policy=policy) == (0, 0)
