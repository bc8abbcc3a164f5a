"""Migration 0010 puts findings and provider checks on (subject, subject_id), keeps every row
of a 0009 ledger, rewrites the relay's order keys to `kind:REFERENCE`, and can be undone."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy.exc
from alembic import command
from sqlalchemy import Engine, text

from ledger.db import create_db_engine
from ledger.migrate import alembic_config, current, upgrade

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)

_TRANSFER = (
    "INSERT INTO transfer (id, reference, provider_reference, origin, status, confirmed, amount,"
    " fee, check_attempts, not_found_count, event_sequence, created_at, updated_at)"
    " VALUES (:id, :ref, :pref, 'expected', 'pending', false, 1000, 50, 0, 0, 1, :now, :now)"
)
_COLLECTION = (
    "INSERT INTO collection (id, reference, origin, status, confirmed, amount, final_check_done,"
    " check_attempts, not_found_count, event_sequence, created_at, updated_at)"
    " VALUES (:id, :ref, 'initiated', 'pending', false, 5000, false, 0, 0, 1, :now, :now)"
)
_FINDING = (
    "INSERT INTO finding (id, transfer_id, collection_id, kind, detail, opened_at, updated_at)"
    " VALUES (:id, :t, :c, :kind, :detail, :now, :now)"
)
_CHECK = (
    "INSERT INTO provider_check (id, transfer_id, collection_id, checked_at, http_status,"
    " result, amount) VALUES (:id, :t, :c, :now, 200, 'found', :amount)"
)
_EVENT = (
    "INSERT INTO relay_event (id, event_id, type, subject, subject_id, reference, sequence,"
    " body, created_at) VALUES (:id, :evt, 'finding.opened', :subject, :sid, :ref, 1, '{}', :now)"
)
_DELIVERY = (
    "INSERT INTO relay_delivery (id, event_id, endpoint_id, subject_key, sequence, status,"
    " attempts, next_attempt_at, created_at, updated_at)"
    " VALUES (:id, :event, 1, :key, 1, 'pending', 0, :now, :now, :now)"
)


def _rows(engine: Engine, sql: str) -> list[tuple[Any, ...]]:
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(sql))]


@pytest.fixture
def ledger_0008(database_url: str) -> Iterator[str]:
    """A ledger at 0009 with two transfers, a collection, findings and checks on both kinds,
    a note and an alert on a finding, and relay events with their deliveries."""
    command.downgrade(alembic_config(database_url), "0009")
    engine = create_db_engine(database_url)
    now = NOW.replace(tzinfo=None) if engine.dialect.name == "sqlite" else NOW
    with engine.begin() as db:
        db.execute(text(_TRANSFER), [
            {"id": 1, "ref": "T-1", "pref": "P-1", "now": now},
            {"id": 2, "ref": "T-2", "pref": None, "now": now},
        ])  # fmt: skip
        db.execute(text(_COLLECTION), {"id": 1, "ref": "C-1", "now": now})
        db.execute(text(_FINDING), [
            {"id": 10, "t": 1, "c": None, "kind": "fee_mismatch", "detail": "fees", "now": now},
            {"id": 11, "t": 2, "c": None, "kind": "stale_pending", "detail": "old", "now": now},
            {"id": 12, "t": None, "c": 1, "kind": "underpaid", "detail": "short", "now": now},
            {"id": 13, "t": None, "c": 1, "kind": "fee_mismatch", "detail": "c fee", "now": now},
        ])  # fmt: skip
        db.execute(text(_CHECK), [
            {"id": 20, "t": 1, "c": None, "amount": 1000, "now": now},
            {"id": 21, "t": None, "c": 1, "amount": 4000, "now": now},
        ])  # fmt: skip
        db.execute(
            text(
                "INSERT INTO finding_note (finding_id, author, body, created_at)"
                " VALUES (12, 'ada', 'called the customer', :now)"
            ),
            {"now": now},
        )
        db.execute(
            text(
                "INSERT INTO alert (key, finding_id, step, title, body, status, created_at)"
                " VALUES ('finding:13:0', 13, 0, 'fee', 'fee', 'sent', :now)"
            ),
            {"now": now},
        )
        db.execute(
            text(
                "INSERT INTO relay_endpoint (id, url, enabled, secret_sealed, created_at,"
                " updated_at) VALUES (1, 'https://example.test/hook', true, 's', :now, :now)"
            ),
            {"now": now},
        )
        db.execute(text(_EVENT), [
            {"id": 30, "evt": "evt_a", "subject": "transfer", "sid": 1, "ref": "T-1", "now": now},
            {"id": 31, "evt": "evt_b", "subject": "collection", "sid": 1, "ref": "C-1",
             "now": now},
        ])  # fmt: skip
        db.execute(text(_DELIVERY), [
            {"id": 40, "event": 30, "key": "transfer:1", "now": now},
            {"id": 41, "event": 31, "key": "collection:1", "now": now},
        ])  # fmt: skip
        db.execute(
            text(
                "INSERT INTO relay_attempt (id, delivery_id, attempted_at, duration_ms,"
                " status_code, outcome) VALUES (50, 40, :now, 12, 500, 'retry')"
            ),
            {"now": now},
        )
    engine.dispose()
    yield database_url


def test_upgrade_keeps_findings_checks_and_names_their_subjects(ledger_0008: str) -> None:
    """After 0010 every finding and check of 0009 is there, on the subject it had, with its
    note and alert, and the deliveries' order keys are `kind:REFERENCE`."""
    upgrade(ledger_0008)
    assert current(ledger_0008) == "0012"
    engine = create_db_engine(ledger_0008)
    try:
        findings = _rows(
            engine, "SELECT id, subject, subject_id, kind, detail FROM finding ORDER BY id"
        )
        checks = _rows(
            engine, "SELECT id, subject, subject_id, amount FROM provider_check ORDER BY id"
        )
        keys = _rows(engine, "SELECT id, subject_key FROM relay_delivery ORDER BY id")
        notes = _rows(engine, "SELECT finding_id, body FROM finding_note")
        alerts = _rows(engine, "SELECT finding_id, key FROM alert")
        attempts = _rows(engine, "SELECT id, delivery_id, status_code FROM relay_attempt")
        columns = _rows(engine, "SELECT COUNT(*) FROM transfer")
    finally:
        engine.dispose()
    assert findings == [
        (10, "transfer", 1, "fee_mismatch", "fees"),
        (11, "transfer", 2, "stale_pending", "old"),
        (12, "collection", 1, "underpaid", "short"),
        (13, "collection", 1, "fee_mismatch", "c fee"),
    ]
    assert checks == [(20, "transfer", 1, 1000), (21, "collection", 1, 4000)]
    assert keys == [(40, "transfer:T-1"), (41, "collection:C-1")]
    assert notes == [(12, "called the customer")]
    assert alerts == [(13, "finding:13:0")]
    assert attempts == [(50, 40, 500)]
    assert columns == [(2,)]


def test_after_the_upgrade_a_finding_is_unique_per_subject_and_kind(ledger_0008: str) -> None:
    """A second fee_mismatch on collection 1 is refused; the same kind on transfer 1 and on
    collection 1 (same row id, other subject) both stand."""
    upgrade(ledger_0008)
    engine = create_db_engine(ledger_0008)
    now = NOW.replace(tzinfo=None) if engine.dialect.name == "sqlite" else NOW
    insert = text(
        "INSERT INTO finding (subject, subject_id, kind, detail, opened_at, updated_at)"
        " VALUES (:s, 1, 'fee_mismatch', 'again', :now, :now)"
    )
    try:
        with pytest.raises(sqlalchemy.exc.IntegrityError), engine.begin() as db:
            db.execute(insert, {"s": "collection", "now": now})
        with pytest.raises(sqlalchemy.exc.IntegrityError), engine.begin() as db:
            db.execute(
                text(
                    "INSERT INTO finding (kind, detail, opened_at, updated_at)"
                    " VALUES ('underpaid', 'no subject', :now, :now)"
                ),
                {"now": now},
            )
        subjects = _rows(
            engine,
            "SELECT subject FROM finding WHERE subject_id = 1 AND kind = 'fee_mismatch' "
            "ORDER BY subject",
        )
    finally:
        engine.dispose()
    assert subjects == [("collection",), ("transfer",)]


def test_downgrade_gives_0008_its_columns_back(ledger_0008: str) -> None:
    """Down to 0008 again, findings and checks hold their transfer_id / collection_id and the
    order keys are `kind:ID` as before."""
    upgrade(ledger_0008)
    command.downgrade(alembic_config(ledger_0008), "0009")
    assert current(ledger_0008) == "0009"
    engine = create_db_engine(ledger_0008)
    try:
        findings = _rows(
            engine, "SELECT id, transfer_id, collection_id, kind FROM finding ORDER BY id"
        )
        checks = _rows(
            engine, "SELECT id, transfer_id, collection_id FROM provider_check ORDER BY id"
        )
        keys = _rows(engine, "SELECT id, subject_key FROM relay_delivery ORDER BY id")
        kept = _rows(
            engine,
            "SELECT (SELECT COUNT(*) FROM alert), (SELECT COUNT(*) FROM finding_note),"
            " (SELECT COUNT(*) FROM relay_attempt)",
        )
    finally:
        engine.dispose()
    assert kept == [(1, 1, 1)]
    assert findings == [
        (10, 1, None, "fee_mismatch"),
        (11, 2, None, "stale_pending"),
        (12, None, 1, "underpaid"),
        (13, None, 1, "fee_mismatch"),
    ]
    assert checks == [(20, 1, None), (21, None, 1)]
    assert keys == [(40, "transfer:1"), (41, "collection:1")]
