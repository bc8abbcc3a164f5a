"""The reconciler, registrations, payouts and operators write their relay events in the
transaction of the change."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func, select

from admin.expected import register
from ledger.db import read_session, write_session
from ledger.events import payloads
from ledger.events.findings import acknowledge_finding
from ledger.models import Finding, RelayEvent, Transfer
from ledger.queries import ExpectedTransfer, find_transfer, register_expected
from payments.errors import PayoutRejectedError
from payments.payouts import PayoutRequest, send_payout
from payrecon.settings import load_settings
from provider import errors as perr
from provider.errors import ProviderError
from provider.models import Transaction
from receiver.apply import apply_delivery
from reconcile.books import recorder
from reconcile.poller import run_pass
from tests.integration.payments.test_payouts import FakeClient
from tests.integration.reconcile.helpers import FakeLookup
from tests.integration.relay.outbox_helpers import add_endpoints, webhook, written
from tests.integration.reports.pages import report_app
from tests.support.servers import running_server

T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)


def _answer(reference: str, amount: int) -> Transaction:
    return Transaction(
        reference=f"TRF_{reference}",
        merchant_reference=reference,
        type="transfer",
        amount=amount,
        fee=1000,
        status="successful",
    )  # type: ignore[arg-type]


def _pass(engine: Engine, answers: dict[str, Any], now: dt.datetime) -> None:
    settings = load_settings(database_url="sqlite://", check_backoff=0, stale_after=10**6)
    asyncio.run(run_pass(engine, FakeLookup(answers), settings, now=now))


def _expect(engine: Engine, reference: str, amount: int = 100_000) -> None:
    with write_session(engine) as session:
        register_expected(session, ExpectedTransfer(reference, amount, 1000), now=T0)


def test_a_confirmation_writes_transfer_confirmed_and_its_findings(engine: Engine) -> None:
    """The first provider confirmation writes `transfer.confirmed` (the record after the
    change), then `finding.opened` for the mismatch it found; a later pass writes nothing."""
    ids = add_endpoints(engine)
    _expect(engine, "R1")
    _pass(engine, {"R1": _answer("R1", 100_100)}, T0 + dt.timedelta(seconds=1))
    events = written(engine)
    with read_session(engine) as session:
        transfer = find_transfer(session, "R1")
        assert transfer is not None and transfer.confirmed
        expected = payloads.transfer_confirmed(transfer)
        finding = session.execute(select(Finding)).scalar_one()
    assert [(e.type, e.reference, e.sequence, e.endpoints) for e in events] == [
        ("transfer.confirmed", "R1", 1, [ids.default]),
        ("finding.opened", "R1", 2, [ids.default]),
    ]
    assert events[0].data == expected
    assert expected["status"] == "successful" and expected["provider_amount"] == 100_100
    assert events[1].data["kind"] == "amount_mismatch" and events[1].data["id"] == finding.id
    with write_session(engine) as session:
        transfer = find_transfer(session, "R1", for_update=True)
        assert transfer is not None
        transfer.next_check_at = T0  # due again: the same answer changes nothing
    _pass(engine, {"R1": _answer("R1", 100_100)}, T0 + dt.timedelta(seconds=2))
    assert len(written(engine)) == 2


def test_a_finding_the_reconciler_resolves_writes_finding_resolved(engine: Engine) -> None:
    """An unreadable answer opens `unverifiable`; the next good answer confirms the transfer
    and resolves it: opened (1), confirmed (2), resolved (3)."""
    add_endpoints(engine)
    _expect(engine, "R2")
    _pass(engine, {"R2": ProviderError("garbled answer")}, T0 + dt.timedelta(seconds=1))
    _pass(engine, {"R2": _answer("R2", 100_000)}, T0 + dt.timedelta(hours=1))
    events = written(engine)
    assert [(e.type, e.sequence) for e in events] == [
        ("finding.opened", 1),
        ("transfer.confirmed", 2),
        ("finding.resolved", 3),
    ]
    assert events[0].data["kind"] == events[2].data["kind"] == "unverifiable"
    assert events[0].data["resolved_at"] is None and events[2].data["resolved_at"] is not None


def test_a_failure_before_the_reconcilers_commit_leaves_neither_change_nor_event(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after `transfer.confirmed` was written, before commit, leaves the transfer
    unconfirmed and no relay event."""
    add_endpoints(engine)
    _expect(engine, "R3")

    def failpoint(*args: object, **kwargs: object) -> None:
        raise RuntimeError("failpoint after the ledger change")

    monkeypatch.setattr(recorder, "raise_finding", failpoint)
    with pytest.raises(RuntimeError, match="failpoint"):
        _pass(engine, {"R3": _answer("R3", 100_100)}, T0 + dt.timedelta(seconds=1))
    with read_session(engine) as session:
        transfer = find_transfer(session, "R3")
        assert transfer is not None and not transfer.confirmed
        assert session.execute(select(func.count()).select_from(RelayEvent)).scalar_one() == 0
        assert session.execute(select(func.count()).select_from(Finding)).scalar_one() == 0


def test_registering_an_orphan_resolves_its_finding_with_an_event(engine: Engine) -> None:
    """Registering a transfer first heard of in a webhook resolves `orphan_event` and writes
    `finding.resolved` after the webhook's two events."""

    add_endpoints(engine)
    with write_session(engine) as session:
        apply_delivery(
            session, webhook("transfer.success", "TRF_9", merchant_reference="m-9"), now=T0
        )
    with write_session(engine) as session:
        register(session, ExpectedTransfer("m-9", 100_000, 1000), now=T0)
    events = written(engine)
    assert [(e.type, e.sequence) for e in events] == [
        ("transfer.reported", 1),
        ("finding.opened", 2),
        ("finding.resolved", 3),
    ]
    assert events[2].data["kind"] == "orphan_event" and events[2].data["resolved_at"]


def _finding(engine: Engine, reference: str) -> int:
    _expect(engine, reference)
    _pass(engine, {reference: _answer(reference, 100_100)}, T0 + dt.timedelta(seconds=1))
    with read_session(engine) as session:
        return int(session.execute(select(Finding.id)).scalar_one())


def test_an_acknowledgement_writes_finding_acknowledged(engine: Engine) -> None:
    """Acknowledging writes `finding.acknowledged` with the time, next in the transfer's
    sequence; an unknown id writes nothing."""
    ids = add_endpoints(engine)
    finding_id = _finding(engine, "R4")
    with write_session(engine) as session:
        assert acknowledge_finding(session, finding_id=finding_id, note="seen", now=T0)
        assert acknowledge_finding(session, finding_id=9999, note="seen", now=T0) is None
    last = written(engine)[-1]
    assert (last.type, last.sequence, last.endpoints) == ("finding.acknowledged", 3, [ids.default])
    assert last.data["id"] == finding_id and last.data["acknowledged_at"] == payloads.iso(T0)
    assert len(written(engine)) == 3


def test_the_reports_pages_ack_form_writes_finding_acknowledged(engine: Engine) -> None:
    """The reports page's ack form writes `finding.acknowledged` with the change."""
    add_endpoints(engine)
    finding_id = _finding(engine, "R5")
    with running_server(report_app(engine)) as base:
        answer = httpx.post(f"{base}/reports/findings/{finding_id}/ack", data={"note": "claimed"})
    assert answer.status_code == 303
    last = written(engine)[-1]
    assert (last.type, last.reference, last.sequence) == ("finding.acknowledged", "R5", 3)
    with read_session(engine) as session:
        finding = session.get(Finding, finding_id)
        assert finding is not None and finding.acknowledged_at is not None
    assert last.data["acknowledged_at"] == payloads.iso(finding.acknowledged_at)


def test_a_transfer_without_events_keeps_sequence_zero(engine: Engine) -> None:
    """A registration alone writes no event and leaves the sequence at 0."""
    _expect(engine, "R6")
    with read_session(engine) as session:
        assert session.execute(select(Transfer.event_sequence)).scalar_one() == 0
    assert written(engine) == []


def test_a_definite_payout_refusal_writes_transfer_confirmed(engine: Engine) -> None:
    """The provider refusing a payout confirms it failed: `transfer.confirmed` with the
    refusal's cause, written with the change."""
    ids = add_endpoints(engine)
    with pytest.raises(PayoutRejectedError):
        send_payout(
            engine,
            FakeClient(perr.InsufficientFundsError("Insufficient funds")),
            PayoutRequest(1_000, "058", "0123456789", "P-1"),
            now=T0,
        )
    events = written(engine)
    assert [(e.type, e.reference, e.sequence, e.endpoints) for e in events] == [
        ("transfer.confirmed", "P-1", 1, [ids.default])
    ]
    assert events[0].data["status"] == "failed"
    assert events[0].data["failure_reason"] == "Insufficient funds"
    assert events[0].data["confirmed_at"] == payloads.iso(T0)
