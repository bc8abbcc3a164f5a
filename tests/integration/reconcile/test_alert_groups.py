"""Alerts that group: per kind, an hourly storm guard, resolved notices, once across processes
(a real local JSON alert sink on a real uvicorn server; both databases)."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

from sqlalchemy import Engine, insert, select, update

from ledger.db import read_session, write_session
from ledger.models import Alert, Finding, Transfer
from payrecon.wiring import keyed_alert
from reconcile.alert_plan import AlertRules
from reconcile.alert_sink import AppriseSink
from reconcile.alerts import dispatch_alerts
from reconcile.checks import Policy
from relay.attempts import Notice
from tests.integration.reconcile.helpers import AlertInbox
from tests.support.servers import running_server

T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
KINDS = ("amount_mismatch", "fee_mismatch", "unknown_to_provider")


def _policy(**rules: Any) -> Policy:
    return Policy(0, 0, 3, 10**9, alerting=AlertRules(**rules))


def _findings(engine: Engine, count: int, kinds: tuple[str, ...] = KINDS, start: int = 0) -> None:
    """`count` transfers, each with one open finding, kinds in turn (bulk inserts)."""
    transfers = [
        {
            "reference": f"GRP-{start + n:06d}",
            "origin": "expected",
            "status": "successful",
            "confirmed": True,
            "amount": 10_000,
            "fee": 100,
            "provider_amount": 10_100,
            "provider_fee": 100,
            "check_attempts": 0,
            "not_found_count": 0,
            "event_sequence": 0,
            "created_at": T0,
            "updated_at": T0,
        }
        for n in range(count)
    ]
    with write_session(engine) as session:
        session.execute(insert(Transfer), transfers)
        ids = dict(
            session.execute(
                select(Transfer.reference, Transfer.id).where(  # type: ignore[call-overload]
                    Transfer.reference.in_([t["reference"] for t in transfers])  # type: ignore[attr-defined]
                )
            ).all()
        )
        session.execute(
            insert(Finding),
            [
                {
                    "subject": "transfer",
                    "subject_id": ids[t["reference"]],
                    "kind": kinds[n % len(kinds)],
                    "detail": "provider amount 10100 kobo, expected 10000 kobo",
                    "opened_at": T0,
                    "updated_at": T0,
                }
                for n, t in enumerate(transfers)
            ],
        )


def _sink(base: str) -> AppriseSink:
    return AppriseSink([base.replace("http", "json") + "/hook"], allow_insecure=True, timeout=5)


def test_ten_thousand_findings_of_three_kinds_send_three_messages(engine: Engine) -> None:
    """A pass with 10,000 findings of 3 kinds sends one grouped message per kind, and a
    restart sends nothing more."""
    _findings(engine, 10_000)
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sink = _sink(base)
        first = dispatch_alerts(
            engine, sink, now=T0, policy=_policy(console_url="https://c.example")
        )
        again = dispatch_alerts(engine, sink, now=T0 + dt.timedelta(minutes=1), policy=_policy())
    assert first == (3, 0)
    assert again == (0, 0)
    assert len(inbox.received) == 3
    amounts = next(m for m in inbox.received if "amount mismatch" in m["title"])
    assert "3,334 × amount mismatch" in amounts["title"]
    assert "₦3,334.00" in amounts["message"]  # 3,334 findings × ₦1.00 difference each
    assert "GRP-000000, GRP-000003" in amounts["message"]
    assert "and 3,324 more" in amounts["message"]
    assert (
        "https://c.example/console/findings?state=open&kind=amount_mismatch" in amounts["message"]
    )
    with read_session(engine) as session:
        statuses = session.execute(select(Alert.status)).scalars().all()  # type: ignore[call-overload]
    assert statuses.count("grouped") == 10_000
    assert statuses.count("sent") == 3


def test_few_findings_still_alert_one_by_one(engine: Engine) -> None:
    """Up to PAYRECON_ALERT_GROUP_AFTER findings of a kind each get their own message."""
    _findings(engine, 5, kinds=("amount_mismatch",))
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sent = dispatch_alerts(engine, _sink(base), now=T0, policy=_policy(group_after=5))
    assert sent == (5, 0)
    assert sorted(m["title"] for m in inbox.received)[0].endswith("transfer GRP-000000")


def test_an_alert_sent_on_its_own_is_worded_in_its_row_and_grouped_ones_are_not(
    engine: Engine,
) -> None:
    """A finding alerted alone keeps the title and body it was sent with; grouped ones none."""
    _findings(engine, 1, kinds=("amount_mismatch",))
    _findings(engine, 6, kinds=("fee_mismatch",), start=100)
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sent = dispatch_alerts(engine, _sink(base), now=T0, policy=_policy(group_after=5))
    assert sent == (2, 0)
    alone = next(m for m in inbox.received if "GRP-000000" in m["title"])
    with read_session(engine) as session:
        rows = session.execute(select(Alert.status, Alert.title, Alert.body)).all()  # type: ignore[call-overload]
    single = [(title, body) for status, title, body in rows if status == "sent" and body]
    assert (alone["title"], alone["message"]) in single
    assert "amount" in alone["message"].lower()
    grouped = [(title, body) for status, title, body in rows if status == "grouped"]
    assert len(grouped) == 6
    assert all(
        title.startswith("payrecon: 6 × fee mismatch") and body == "" for title, body in grouped
    )


def test_storm_guard_sends_one_suppressed_message_an_hour(engine: Engine) -> None:
    """Past the hour's cap the rest is one "suppressed" message; the next hour alerts again."""
    _findings(engine, 4, kinds=("amount_mismatch", "fee_mismatch", "unverifiable", "orphan_event"))
    inbox = AlertInbox()
    policy = _policy(max_per_hour=2)
    with running_server(inbox.app()) as base:
        sink = _sink(base)
        first = dispatch_alerts(engine, sink, now=T0, policy=policy)
        _findings(engine, 3, kinds=("stale_pending",), start=100)
        later = dispatch_alerts(engine, sink, now=T0 + dt.timedelta(minutes=30), policy=policy)
        _findings(engine, 1, kinds=("unverifiable",), start=200)
        next_hour = dispatch_alerts(engine, sink, now=T0 + dt.timedelta(hours=1), policy=policy)
    assert first == (3, 0)  # two findings' messages and the suppressed notice
    assert later == (0, 0)
    assert next_hour == (1, 0)
    titles = [m["title"] for m in inbox.received]
    assert titles[2] == "payrecon: alerts suppressed — too many this hour"
    assert "2 findings are not announced" in inbox.received[2]["message"]
    assert "10:00 UTC (11:00 Lagos)" in inbox.received[2]["message"]


def test_resolved_notice_once_all_findings_of_a_group_resolve(engine: Engine) -> None:
    """A grouped alert gets one resolved notice when its last finding resolves, never two."""
    _findings(engine, 7, kinds=("amount_mismatch",))
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sink = _sink(base)
        dispatch_alerts(engine, sink, now=T0, policy=_policy())
        with write_session(engine) as session:
            ids = sorted(session.execute(select(Finding.id)).scalars().all())  # type: ignore[call-overload]
            session.execute(
                update(Finding).where(Finding.id.in_(ids[:6])).values(resolved_at=T0)  # type: ignore[union-attr]
            )
        partly = dispatch_alerts(engine, sink, now=T0 + dt.timedelta(minutes=1), policy=_policy())
        with write_session(engine) as session:
            session.execute(update(Finding).values(resolved_at=T0))
        resolved = dispatch_alerts(engine, sink, now=T0 + dt.timedelta(minutes=2), policy=_policy())
        again = dispatch_alerts(engine, sink, now=T0 + dt.timedelta(minutes=3), policy=_policy())
    assert (partly, resolved, again) == ((0, 0), (1, 0), (0, 0))
    notice = inbox.received[-1]
    assert notice["title"] == "payrecon: resolved — 7 × amount mismatch (transfers)"
    assert "09:00 UTC (10:00 Lagos)" in notice["message"]


def test_resolved_notices_can_be_switched_off(engine: Engine) -> None:
    """With PAYRECON_ALERT_RESOLVED=0 a resolved single alert sends nothing more."""
    _findings(engine, 1, kinds=("amount_mismatch",))
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        sink = _sink(base)
        dispatch_alerts(engine, sink, now=T0, policy=_policy(resolved=False))
        with write_session(engine) as session:
            session.execute(update(Finding).values(resolved_at=T0))
        after = dispatch_alerts(
            engine, sink, now=T0 + dt.timedelta(minutes=1), policy=_policy(resolved=False)
        )
        later = dispatch_alerts(engine, sink, now=T0 + dt.timedelta(minutes=2), policy=_policy())
    assert (after, later) == ((0, 0), (0, 0))
    assert len(inbox.received) == 1


def test_two_reconcilers_dispatching_at_once_send_one_message(engine: Engine) -> None:
    """Two processes dispatching the same 300 findings together send one message between them."""
    _findings(engine, 300, kinds=("amount_mismatch",))
    inbox = AlertInbox()
    results: list[tuple[int, int]] = []
    with running_server(inbox.app()) as base:
        sink = _sink(base)
        barrier = threading.Barrier(2)

        def run() -> None:
            barrier.wait()
            results.append(dispatch_alerts(engine, sink, now=T0, policy=_policy()))

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert sorted(results) == [(0, 0), (1, 0)]
    assert len(inbox.received) == 1


def test_relay_notices_of_one_batch_group_the_same_way(engine: Engine) -> None:
    """Eight endpoints failing in one batch make one message naming their hosts, once."""
    notices = [
        Notice(
            key=f"relay-delivery-failed:{n}:2026-03-01T09",
            title=f"payrecon relay: host{n}.example did not take event evt_{n}",
            body="…",
            kind="relay_delivery_failed",
            name=f"host{n}.example",
        )
        for n in range(8)
    ]
    inbox = AlertInbox()
    with running_server(inbox.app()) as base:
        alert = keyed_alert(engine, _sink(base), AlertRules())
        alert(notices)
        alert(notices)  # the same keys again: a restarted worker
    assert len(inbox.received) == 1
    assert "8 × relay delivery failed (endpoints)" in inbox.received[0]["title"]
    assert "host0.example, host1.example" in inbox.received[0]["message"]
