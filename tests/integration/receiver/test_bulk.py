"""Bulk statements (ledger.bulk) on both databases: pipelined sends, reserved ids, raw bytes."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.exc import IntegrityError, StatementError

import receiver.ingest
from ledger.bulk import Bulk, table_columns
from ledger.db import read_session, write_session
from ledger.models import Delivery, Transfer, WebhookEvent
from ledger.types import DeliveryOutcome, utcnow
from receiver.apply import Applied, IncomingDelivery
from receiver.errors import BatchRaceError, DeliveryInvalidError, IngestUnavailableError
from receiver.events import IgnoredEvent, parse_event
from receiver.ingest import GroupCommitWriter
from tests.support.webhooks import encode, success_body

_COLUMNS = (
    ("id", "bigint"),
    ("reference", "text"),
    ("origin", "text"),
    ("status", "text"),
    ("confirmed", "boolean"),
    ("check_attempts", "integer"),
    ("not_found_count", "integer"),
    ("created_at", "timestamptz"),
    ("updated_at", "timestamptz"),
)


def _transfer_row(bulk: Bulk, transfer_id: int, reference: str) -> tuple[object, ...]:
    stamp = bulk.time(utcnow())
    return (transfer_id, reference, "webhook", "pending", False, 0, 0, stamp, stamp)


def test_reserved_ids_are_unused_and_take_the_inserted_rows(engine: Engine) -> None:
    """Ids reserved in one send are distinct, and rows inserted with them are read back."""
    with write_session(engine) as session:
        bulk = Bulk(session.connection())
        (rows,) = bulk.send([bulk.reserve_ids("transfer", 3)])
        ids = bulk.reserved(rows, 3)
        assert len(set(ids)) == 3
        bulk.send(
            bulk.insert("transfer", _COLUMNS, [_transfer_row(bulk, i, f"BULK-{i}") for i in ids])
        )
    with read_session(engine) as session:
        stored = session.execute(select(Transfer.id, Transfer.reference)).all()
    assert sorted(stored) == sorted((i, f"BULK-{i}") for i in ids)


def test_a_unique_key_hit_in_a_send_is_sqlalchemys_integrity_error(engine: Engine) -> None:
    """A duplicate key inside a (pipelined) send raises IntegrityError and nothing is kept."""
    with pytest.raises(IntegrityError), write_session(engine) as session:
        bulk = Bulk(session.connection())
        (rows,) = bulk.send([bulk.reserve_ids("transfer", 2)])
        first, second = bulk.reserved(rows, 2)
        bulk.send(
            [
                *bulk.insert("transfer", _COLUMNS, [_transfer_row(bulk, first, "BULK-same")]),
                *bulk.insert("transfer", _COLUMNS, [_transfer_row(bulk, second, "BULK-same")]),
            ]
        )
    with read_session(engine) as session:
        assert session.scalars(select(Transfer)).all() == []


def _incoming(raw: bytes, headers: dict[str, str]) -> IncomingDelivery:
    delivery = IncomingDelivery(
        utcnow(), "203.0.113.9", headers, raw, hashlib.sha256(raw).hexdigest(), len(raw)
    )
    try:
        delivery.parsed = parse_event(raw)
    except DeliveryInvalidError as exc:  # archived as invalid, as the receiver does
        delivery.error = exc.code
    return delivery


def _commit_together(engine: Engine, deliveries: list[IncomingDelivery]) -> list[Applied]:
    sizes: list[int] = []

    async def run() -> list[Applied]:
        writer = GroupCommitWriter(engine, linger=5.0, on_batch=lambda n, _s: sizes.append(n))
        await writer.start()
        try:
            return await asyncio.gather(*(writer.submit(d) for d in deliveries))
        finally:
            await writer.stop()

    results = asyncio.run(run())
    assert sizes == [len(deliveries)]  # one batch: the bulk path, not the per-delivery one
    return results


def test_a_batch_archives_raw_bytes_and_headers_exactly(engine: Engine) -> None:
    """Bodies with every byte value and non-ASCII headers come back from the archive unchanged."""
    binary = bytes(range(256))
    valid = encode(success_body("BULK-raw", merchant_reference="m-café-✓"))
    headers = {"user-agent": 'prövider/1 \\ "quoted"', "content-type": "application/json"}
    results = _commit_together(engine, [_incoming(binary, headers), _incoming(valid, headers)])
    assert [r.outcome for r in results] == [DeliveryOutcome.INVALID, DeliveryOutcome.ACCEPTED]
    with read_session(engine) as session:
        stored = session.scalars(select(Delivery).order_by(Delivery.id)).all()  # type: ignore[arg-type]
        event = session.scalars(select(WebhookEvent)).one()
        transfer = session.scalars(select(Transfer)).one()
    assert [d.body for d in stored] == [binary, valid]
    assert [json.loads(d.headers) for d in stored] == [headers, headers]
    assert stored[1].event_id == event.id and stored[1].transfer_id == transfer.id
    assert event.transfer_id == transfer.id
    assert transfer.reference == "m-café-✓"


def test_a_delivery_the_driver_cannot_store_fails_alone(engine: Engine) -> None:
    """A value the driver cannot encode fails its own delivery (503), not its batch's others."""
    good = _incoming(encode(success_body("BULK-good")), {})
    bad = _incoming(b'{"event":"x.y","data":{}}', {})
    # A label the parser would never let through: a lone surrogate cannot be encoded.
    bad.parsed = IgnoredEvent("x.y", "\ud800", "{}", hashlib.sha256(b"{}").hexdigest())

    async def run() -> list[Applied | BaseException]:
        writer = GroupCommitWriter(engine, linger=5.0)
        await writer.start()
        try:
            return await asyncio.gather(
                writer.submit(good), writer.submit(bad), return_exceptions=True
            )
        finally:
            await writer.stop()

    first, second = asyncio.run(run())
    assert isinstance(first, Applied) and first.outcome is DeliveryOutcome.ACCEPTED
    assert isinstance(second, IngestUnavailableError)
    with read_session(engine) as session:
        assert session.scalars(select(Delivery.reference)).all() == ["BULK-good"]


def test_a_value_the_driver_cannot_encode_is_sqlalchemys_statement_error(engine: Engine) -> None:
    """An unpaired surrogate in a bulk row comes out as StatementError and nothing is kept."""
    with pytest.raises(StatementError), write_session(engine) as session:
        bulk = Bulk(session.connection())
        (rows,) = bulk.send([bulk.reserve_ids("transfer", 1)])
        (transfer_id,) = bulk.reserved(rows, 1)
        bulk.send(
            bulk.insert("transfer", _COLUMNS, [_transfer_row(bulk, transfer_id, "BULK-\ud800")])
        )
    with read_session(engine) as session:
        assert session.scalars(select(Transfer)).all() == []


def test_bulk_columns_are_typed_by_the_table_definition() -> None:
    """A bulk column list takes each column's PostgreSQL type from ledger.models."""
    table = Transfer.__table__  # type: ignore[attr-defined]
    assert table_columns(table, ("id", "reference", "confirmed", "created_at")) == (
        ("id", "BIGINT"),
        ("reference", "VARCHAR(100)"),
        ("confirmed", "BOOLEAN"),
        ("created_at", "TIMESTAMP WITH TIME ZONE"),
    )


def test_a_batch_that_loses_a_race_is_applied_one_delivery_at_a_time(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BatchRaceError makes the writer retry each delivery in its own transaction."""

    def lost_race(*_args: object, **_kwargs: object) -> list[Applied]:
        raise BatchRaceError("event belongs to a transfer outside the batch")

    monkeypatch.setattr(receiver.ingest, "apply_batch", lost_race)
    first = _incoming(encode(success_body("BULK-race-1")), {})
    second = _incoming(encode(success_body("BULK-race-2")), {})
    results = _commit_together(engine, [first, second])
    assert [r.outcome for r in results] == [DeliveryOutcome.ACCEPTED] * 2
    with read_session(engine) as session:
        assert sorted(session.scalars(select(Delivery.reference)).all()) == [
            "BULK-race-1",
            "BULK-race-2",
        ]
