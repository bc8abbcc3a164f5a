"""The receiver writes `transfer.reported` and `finding.opened` in the transaction of the change."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine, func, select

from ledger.db import read_session, write_session
from ledger.models import Finding, RelayEvent, Transfer
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import utcnow
from receiver import apply, batch
from receiver.apply import IncomingDelivery, apply_delivery
from receiver.batch import apply_batch
from receiver.replay import replay
from tests.integration.relay.outbox_helpers import add_endpoints, webhook, written


def _one_by_one(engine: Engine, deliveries: list[IncomingDelivery]) -> None:
    for delivery in deliveries:
        with write_session(engine) as session:
            apply_delivery(session, delivery, now=utcnow())


def _as_batch(engine: Engine, deliveries: list[IncomingDelivery]) -> None:
    with write_session(engine) as session:
        apply_batch(session, deliveries, now=utcnow())


WRITERS = {"per_delivery": _one_by_one, "batch": _as_batch}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_an_unknown_transfer_is_reported_then_its_orphan_finding_opened(
    engine: Engine, writer: str
) -> None:
    """An event for a transfer the ledger never knew writes `transfer.reported` (1) and
    `finding.opened` (2); each goes only to the enabled endpoints that take its type."""
    ids = add_endpoints(engine)
    WRITERS[writer](engine, [webhook("transfer.success", "TRF_1", merchant_reference="m-1")])
    events = written(engine)
    with read_session(engine) as session:
        finding = session.execute(select(Finding)).scalar_one()
    assert [(e.type, e.reference, e.sequence, e.endpoints) for e in events] == [
        ("transfer.reported", "m-1", 1, [ids.reported]),
        ("finding.opened", "m-1", 2, [ids.default]),
    ]
    assert events[0].data == {
        "reference": "m-1",
        "provider_reference": "TRF_1",
        "status": "successful",
        "webhook_amount": 100_000,
        "webhook_fee": 1000,
        "failure_reason": None,
    }
    assert events[1].data["id"] == finding.id
    assert events[1].data["kind"] == "orphan_event" and events[1].data["subject"] == "transfer"
    assert events[1].data["reference"] == "m-1" and events[1].data["resolved_at"] is None
    assert events[1].data["detail"] == finding.detail
    with read_session(engine) as session:
        assert session.execute(select(Transfer.event_sequence)).scalar_one() == 2


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_an_expected_transfer_is_reported_once_and_a_conflict_opens_a_finding(
    engine: Engine, writer: str
) -> None:
    """The first outcome of an expected transfer is reported, a duplicate writes nothing, and a
    contradicting outcome opens `status_conflict` with the next sequence number."""
    add_endpoints(engine)
    with write_session(engine) as session:
        register_expected(session, ExpectedTransfer("m-2", 100_000, 1000), now=utcnow())
    WRITERS[writer](
        engine,
        [
            webhook("transfer.success", "TRF_2", merchant_reference="m-2"),
            webhook("transfer.success", "TRF_2", merchant_reference="m-2"),
            webhook("transfer.failed", "TRF_2", merchant_reference="m-2"),
        ],
    )
    events = written(engine)
    assert [(e.type, e.sequence) for e in events] == [
        ("transfer.reported", 1),
        ("finding.opened", 2),
    ]
    assert events[0].data["status"] == "successful"
    assert events[1].data["kind"] == "status_conflict"


def test_a_confirmed_transfer_is_not_reported(engine: Engine) -> None:
    """A webhook outcome arriving after the provider's API confirmed the transfer is evidence
    only: no `transfer.reported`."""
    with write_session(engine) as session:
        transfer, _ = register_expected(
            session, ExpectedTransfer("m-3", 100_000, 1000), now=utcnow()
        )
        transfer.confirmed = True
        transfer.status = "successful"
    _one_by_one(engine, [webhook("transfer.success", "TRF_3", merchant_reference="m-3")])
    assert written(engine) == []


def test_a_batch_with_no_endpoint_still_writes_its_events(engine: Engine) -> None:
    """Events are written whatever the endpoints: with none, they have no deliveries."""
    _as_batch(engine, [webhook("transfer.failed", "TRF_4")])
    events = written(engine)
    assert [(e.type, e.sequence, e.endpoints) for e in events] == [
        ("transfer.reported", 1, []),
        ("finding.opened", 2, []),
    ]
    assert events[0].data["failure_reason"] == "Insufficient funds"


def _fail_archive(*args: object, **kwargs: object) -> None:
    raise RuntimeError("failpoint after the ledger change")


@pytest.mark.parametrize(
    ("writer", "failpoint"),
    [(_one_by_one, (apply, "archive")), (_as_batch, (batch, "_raise_known_findings"))],
    ids=["per_delivery", "batch"],
)
def test_a_failure_before_commit_leaves_neither_the_change_nor_its_event(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    writer: Callable[[Engine, list[IncomingDelivery]], None],
    failpoint: tuple[object, str],
) -> None:
    """A failure after the transfer and its events were written, before commit, rolls back
    both: no transfer, no finding, no relay event, no delivery."""
    add_endpoints(engine)
    monkeypatch.setattr(*failpoint, _fail_archive)
    with pytest.raises(RuntimeError, match="failpoint"):
        writer(engine, [webhook("transfer.success", "TRF_5")])
    with read_session(engine) as session:
        for table in (Transfer, Finding, RelayEvent):
            assert session.execute(select(func.count()).select_from(table)).scalar_one() == 0
    assert written(engine) == []


def test_replay_writes_no_second_transfer_reported(engine: Engine) -> None:
    """Replaying the archive rebuilds the webhook evidence without reporting an outcome again
    (its findings are still open, so no event at all)."""
    add_endpoints(engine)
    _one_by_one(
        engine,
        [
            webhook("transfer.success", "TRF_6"),
            webhook("transfer.failed", "TRF_6"),
        ],
    )
    before = written(engine)
    assert [e.type for e in before] == ["transfer.reported", "finding.opened", "finding.opened"]
    with write_session(engine) as session:
        summary = replay(session, since=None, now=utcnow())
    assert summary.reapplied == 2
    assert written(engine) == before
