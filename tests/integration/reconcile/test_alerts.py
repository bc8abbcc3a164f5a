"""Alerts: once per finding (and per stale step), to a real local JSON receiver."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

from sqlalchemy import Engine, select, update

from ledger.db import read_session, write_session
from ledger.findings import acknowledge_finding
from ledger.models import Alert, Finding, Transfer
from ledger.queries import ExpectedTransfer, register_expected
from payrecon.settings import load_settings
from provider.errors import AuthenticationError
from provider.models import Transaction
from reconcile.alerts import AppriseSink
from reconcile.errors import ProviderKeyRefusedError
from reconcile.poller import run_pass
from tests.integration.reconcile.helpers import AlertInbox, FakeLookup
from tests.support.servers import free_port, running_server

T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)


def _tx(ref: str, amount: int, fee: int = 100, status: str = "successful") -> Transaction:
    return Transaction(
        reference=f"TRF_{ref}",
        merchant_reference=ref,
        type="transfer",
        amount=amount,
        fee=fee,
        status=status,
    )  # type: ignore[arg-type]


def _register(engine: Engine, *refs: str) -> None:
    with write_session(engine) as session:
        for ref in refs:
            register_expected(session, ExpectedTransfer(ref, 10_000, 100), now=T0)


def _pass(engine: Engine, client: Any, sink: Any, now: dt.datetime, **settings: Any) -> Any:
    values: dict[str, Any] = {"database_url": "sqlite://", "check_backoff": 0}
    values.update(settings)
    return asyncio.run(run_pass(engine, client, load_settings(**values), now=now, sink=sink))


def test_each_finding_alerts_once_across_passes(engine: Engine) -> None:
    """Two mismatched transfers give two alerts; later passes and restarts send none."""
    _register(engine, "A1", "A2", "A3")
    client = FakeLookup(
        {"A1": _tx("A1", 10_100), "A2": _tx("A2", 10_000, fee=900), "A3": _tx("A3", 10_000)}
    )
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sink = AppriseSink([base.replace("http", "json") + "/hook"], allow_insecure=True, timeout=5)
        summary = _pass(engine, client, sink, T0 + dt.timedelta(seconds=1))
        for n in range(3):
            now = T0 + dt.timedelta(seconds=10 + n)
            with write_session(engine) as session:  # late webhooks make everything due again
                session.execute(update(Transfer).values(next_check_at=now))
            again = _pass(engine, client, sink, now)  # a new owner each time: a restart
            assert again.checked == 3
    assert summary.findings_raised == 2
    assert summary.alerts_sent == 2
    assert len(inbox.received) == 2
    titles = sorted(item["title"] for item in inbox.received)
    assert "amount_mismatch on transfer A1" in titles[0]
    assert "fee_mismatch on transfer A2" in titles[1]
    assert "₦101.00" in next(i["message"] for i in inbox.received if "A1" in i["title"])


def test_acknowledged_findings_do_not_alert(engine: Engine) -> None:
    """A finding acknowledged before the dispatch never alerts."""
    _register(engine, "B1")
    client = FakeLookup({"B1": _tx("B1", 10_100)})
    _pass(engine, client, None, T0 + dt.timedelta(seconds=1))  # raised and logged only
    with write_session(engine) as session:
        finding = session.execute(select(Finding)).scalar_one()
        acknowledge_finding(session, finding_id=finding.id or 0, note="known", now=T0)
        # As if reopened after the acknowledgement: a new alert key, yet still acknowledged.
        finding.opened_at = T0 + dt.timedelta(seconds=5)
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sink = AppriseSink([base.replace("http", "json") + "/hook"], allow_insecure=True, timeout=5)
        summary = _pass(engine, client, sink, T0 + dt.timedelta(seconds=20))
    assert summary.alerts_sent == 0
    assert inbox.received == []


def test_stale_pending_escalates_at_1_4_and_24_times(engine: Engine) -> None:
    """A stuck transfer alerts at 1×, 4× and 24× stale_after, once each."""
    _register(engine, "C1")
    client = FakeLookup({"C1": _tx("C1", 10_000, status="pending")})
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sink = AppriseSink([base.replace("http", "json") + "/hook"], allow_insecure=True, timeout=5)
        for seconds in (50, 100, 150, 399, 400, 401, 2399, 2400, 2500, 9000):
            _pass(engine, client, sink, T0 + dt.timedelta(seconds=seconds), stale_after=100)
    steps = [item["title"] for item in inbox.received]
    assert len(steps) == 3
    assert "escalation" not in steps[0]
    assert "escalation 2" in steps[1]
    assert "escalation 3" in steps[2]


def test_failing_channel_is_recorded_and_never_blocks(engine: Engine) -> None:
    """A channel that cannot be reached marks the alert failed; the pass still completes."""
    _register(engine, "D1")
    client = FakeLookup({"D1": _tx("D1", 10_100)})
    sink = AppriseSink([f"json://127.0.0.1:{free_port()}/hook"], allow_insecure=True, timeout=1)
    summary = _pass(engine, client, sink, T0 + dt.timedelta(seconds=1))
    assert summary.checked == 1
    assert summary.alerts_failed == 1
    with read_session(engine) as session:
        alert = session.execute(select(Alert)).scalar_one()
    assert alert.status == "failed"
    assert alert.error


def test_refused_key_stops_the_pass_with_one_alert_per_hour(engine: Engine) -> None:
    """A 401 stops every pass; the key alert is claimed once for the hour."""
    _register(engine, "E1", "E2")
    client = FakeLookup(
        {r: AuthenticationError("Unauthenticated", status_code=401) for r in ("E1", "E2")}
    )
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sink = AppriseSink([base.replace("http", "json") + "/hook"], allow_insecure=True, timeout=5)
        for minute in (1, 2, 3):
            try:
                _pass(engine, client, sink, T0 + dt.timedelta(minutes=minute))
            except ProviderKeyRefusedError as exc:
                assert "refused the secret key" in str(exc)
            else:  # pragma: no cover - the assertion below reports it
                raise AssertionError("the pass did not stop")
    assert len(inbox.received) == 1
    assert "refused the secret key" in inbox.received[0]["title"]
