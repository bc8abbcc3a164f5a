"""Two writers emitting events about one transfer at once never share or skip a sequence."""

from __future__ import annotations

import threading

from sqlalchemy import select

from ledger.db import create_db_engine, read_session, write_session
from ledger.events.outbox import emit
from ledger.events.types import RelayEventType, Subject
from ledger.models import RelayEvent
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import utcnow

WRITERS = 2
EVENTS_EACH = 100


def _emit_many(url: str, transfer_id: int, start: threading.Barrier, errors: list[str]) -> None:
    engine = create_db_engine(url)  # a connection of its own, as a second process has
    try:
        start.wait(timeout=60)
        for number in range(EVENTS_EACH):
            with write_session(engine) as session:
                emit(
                    session,
                    type=RelayEventType.FINDING_OPENED,
                    subject=Subject.TRANSFER,
                    subject_id=transfer_id,
                    reference="RACE",
                    data={"writer": threading.current_thread().name, "number": number},
                    now=utcnow(),
                )
    except Exception as exc:  # reported to the test's thread
        errors.append(repr(exc))
    finally:
        engine.dispose()


def test_concurrent_writers_get_sequences_one_to_n_in_id_order(postgres_url: str) -> None:
    """2 × 100 events emitted concurrently for one transfer on PostgreSQL get sequences exactly
    1..200, and their ids sort in sequence order."""
    probe = create_db_engine(postgres_url)
    with write_session(probe) as session:
        transfer, _ = register_expected(session, ExpectedTransfer("RACE", 1000, 10), now=utcnow())
        transfer_id = transfer.id
    assert transfer_id is not None
    start = threading.Barrier(WRITERS)
    errors: list[str] = []
    threads = [
        threading.Thread(
            target=_emit_many, args=(postgres_url, transfer_id, start, errors), name=f"w{n}"
        )
        for n in range(WRITERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    with read_session(probe) as session:
        rows = session.execute(
            select(RelayEvent.id, RelayEvent.sequence, RelayEvent.body)
            .where(RelayEvent.subject_id == transfer_id)  # type: ignore[arg-type]
            .order_by(RelayEvent.id)  # type: ignore[arg-type]
        ).all()
    probe.dispose()
    sequences = [row[1] for row in rows]
    assert sequences == list(range(1, WRITERS * EVENTS_EACH + 1))
    writers = {body.split('"writer":"')[1][:2] for _, _, body in rows}
    assert writers == {f"w{n}" for n in range(WRITERS)}
