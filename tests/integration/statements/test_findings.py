"""The statement findings raised and resolved by imports, hand work, reconcile passes and
period locks, with their relay events and grouped alerts, on both databases."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session, col

from admin.actions import statements as actions
from admin.actions.actor import Actor, Role
from ledger.db import write_session
from ledger.events.outbox import emit
from ledger.events.types import RelayEventType, Subject
from ledger.models import Finding, RelayEvent, StatementLine, Transfer
from reconcile.alert_plan import AlertRules
from reconcile.alert_sink import AppriseSink
from reconcile.alerts import dispatch_alerts
from reconcile.checks import Policy
from reconcile.statements.passes import match_statements
from tests.integration.reconcile.helpers import AlertInbox
from tests.integration.statements.ledger_rows import (
    SAMPLE,
    add_transfer,
    sample_ledger,
    write_csv,
)
from tests.support.servers import running_server

FINANCE = Actor("fola", Role.FINANCE, "127.0.0.1")
WINDOW = dt.timedelta(days=2)
# Well after the sample's days (2–4 November 2026): every unmatched line is past the window.
NOW = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
ROWS = SAMPLE.read_text(encoding="utf-8").splitlines()[1:]


def _import(engine: Engine, path: Path, *, now: dt.datetime = NOW) -> dict[str, Any]:
    with write_session(engine) as session:
        summary = actions.import_statement(
            session, FINANCE, path, mapping="sandbox", window=WINDOW, max_bytes=10**7, now=now
        )
    return summary.to_json()


def _findings(engine: Engine, kind: str) -> dict[tuple[str, int], Finding]:
    with Session(engine) as session:
        rows = session.execute(select(Finding).where(col(Finding.kind) == kind)).scalars()
        return {(f.subject, f.subject_id): f for f in rows}


def _open(engine: Engine, kind: str) -> set[tuple[str, int]]:
    return {key for key, f in _findings(engine, kind).items() if f.resolved_at is None}


def _events(engine: Engine, subject: str) -> list[tuple[str, str | None]]:
    with Session(engine) as session:
        rows = session.execute(
            select(RelayEvent.type, RelayEvent.reference)  # type: ignore[call-overload]
            .where(col(RelayEvent.subject) == subject)
            .order_by(col(RelayEvent.id))
        )
        return [(row[0], row[1]) for row in rows]


def test_an_unmatched_line_is_a_finding_until_it_is_explained(engine: Engine) -> None:
    """The sample's funding credit matches nothing: `unmatched_statement_line` opens on
    `statement_line:1` with its relay event; ignoring it as a funding resolves it."""
    sample_ledger(engine)
    _import(engine, SAMPLE)
    assert _open(engine, "unmatched_statement_line") == {("statement_line", 1)}
    detail = _findings(engine, "unmatched_statement_line")[("statement_line", 1)].detail
    assert "credit of 50000000 kobo on 2026-11-02" in detail
    assert _events(engine, "statement_line") == [("finding.opened", "1")]
    with write_session(engine) as session:
        actions.ignore(session, FINANCE, 1, ignored_as="funding", note="top-up", now=NOW)
    assert _open(engine, "unmatched_statement_line") == set()
    assert _events(engine, "statement_line")[-1] == ("finding.resolved", "1")
    with write_session(engine) as session:
        actions.unmatch(session, FINANCE, 1, now=NOW)
    assert _open(engine, "unmatched_statement_line") == {("statement_line", 1)}


def test_a_young_unmatched_line_waits_for_the_window(engine: Engine, tmp_path: Path) -> None:
    """A line dated within the date window is not yet a finding; a pass once it is older
    raises it."""
    path = write_csv(tmp_path / "young.csv", [ROWS[0]])
    _import(engine, path, now=dt.datetime(2026, 11, 3, 9, 0, tzinfo=dt.UTC))
    assert _open(engine, "unmatched_statement_line") == set()
    match_statements(engine, object(), now=NOW)
    assert _open(engine, "unmatched_statement_line") == {("statement_line", 1)}


def test_a_missing_line_is_a_balance_gap_until_a_corrected_export(
    engine: Engine, tmp_path: Path
) -> None:
    """An export without the fee line breaks the chain before the next line; importing the
    full export stores the missing line and the gap resolves."""
    sample_ledger(engine)
    _import(engine, write_csv(tmp_path / "short.csv", [*ROWS[:2], *ROWS[3:]]))
    gaps = _findings(engine, "statement_balance_gap")
    assert set(gaps) == {("statement_line", 3)}
    assert "moves 1075 kobo beyond" in gaps[("statement_line", 3)].detail.replace("-", "")
    _import(engine, SAMPLE)
    assert _open(engine, "statement_balance_gap") == set()


def test_a_final_transfer_absent_from_a_covering_statement_is_missing(
    engine: Engine, tmp_path: Path
) -> None:
    """A successful payout of 2 November that no line shows, on a statement covering 2 to 4
    November (window 2 days), is `missing_from_statement`; importing its lines resolves it."""
    sample_ledger(engine)
    with Session(engine) as session:
        add_transfer(session, "inv-1003", "TRF_99AA88BB77CC66DD", 100_000, 1075, "successful")
        session.commit()
    _import(engine, SAMPLE)
    (key,) = _open(engine, "missing_from_statement")
    assert key[0] == "transfer"
    assert (
        "payout of 101075 kobo on 2026-11-02"
        in _findings(engine, "missing_from_statement")[key].detail
    )
    extra = write_csv(
        tmp_path / "more.csv",
        [
            *ROWS,
            '2026-11-04,,TRF_99AA88BB77CC66DD,Transfer / inv-1003,"1,010.75",,"1,535,717.75"',
        ],
    )
    _import(engine, extra)
    assert _open(engine, "missing_from_statement") == set()


def test_a_fee_that_drifted_is_a_statement_mismatch_with_both_figures(
    engine: Engine, tmp_path: Path
) -> None:
    """A fee line of ₦20.75 for a ₦10.75 fee is matched by reference and raises
    `statement_mismatch` naming both figures; unmatching the line resolves it."""
    sample_ledger(engine)
    drift = [
        *ROWS[:2],
        "2026-11-02,2026-11-02,TRF_D7731322DE471BE7,Fee: TRF_D7731322DE471BE7,20.75,,"
        '"1,487,479.25"',
    ]
    _import(engine, write_csv(tmp_path / "drift.csv", drift))
    (key,) = _open(engine, "statement_mismatch")
    detail = _findings(engine, "statement_mismatch")[key].detail
    assert "2075 kobo" in detail and "1075 kobo" in detail
    with write_session(engine) as session:
        actions.unmatch(session, FINANCE, 3, now=NOW)
    assert _open(engine, "statement_mismatch") == set()


def test_a_pending_payouts_debit_is_not_a_mismatch(engine: Engine, tmp_path: Path) -> None:
    """A debit and fee for a transfer still pending match it and raise nothing."""
    with Session(engine) as session:
        add_transfer(session, "inv-2001", "TRF_PENDING000001", 1_250_000, 1075, "pending")
        session.commit()
    rows = [
        '2026-11-02,,TRF_PENDING000001,Transfer / inv-2001,"12,500.00",,"987,500.00"',
        '2026-11-02,,TRF_PENDING000001,Fee: TRF_PENDING000001,10.75,,"987,489.25"',
    ]
    summary = _import(engine, write_csv(tmp_path / "p.csv", rows))
    assert summary["matched"] == 2
    assert _open(engine, "statement_mismatch") == set()
    assert _open(engine, "missing_from_statement") == set()


def test_a_statement_credit_for_a_successful_transfer_is_a_reversal(
    engine: Engine, tmp_path: Path
) -> None:
    """The credit back of inv-1001's amount reverses the transfer (source `statement`),
    opens `reversed_after_success` and clears the line's pending flag."""
    sample_ledger(engine)
    rows = [
        *ROWS[:3],
        "2026-11-03,,TRF_D7731322DE471BE7,REVERSAL TRF_D7731322DE471BE7,"
        ',"12,500.00","1,499,989.25"',
    ]
    summary = _import(engine, write_csv(tmp_path / "rev.csv", rows))
    assert [r["transfer"] for r in summary["reversals"]] == ["inv-1001"]
    with Session(engine) as session:
        transfer = session.execute(
            select(Transfer).where(col(Transfer.reference) == "inv-1001")
        ).scalar_one()
        line = session.get(StatementLine, 4)
        assert line is not None
        assert (transfer.status, transfer.reversal_source) == ("reversed", "statement")
        assert line.reversal_pending is False
        assert transfer.id is not None
    assert _open(engine, "reversed_after_success") == {("transfer", transfer.id)}
    assert ("transfer.reversed", "inv-1001") in _events(engine, "transfer")
    assert _open(engine, "statement_mismatch") == set()


def test_changes_inside_a_locked_period_are_findings_until_it_is_locked_again(
    engine: Engine, tmp_path: Path
) -> None:
    """An import adding a line, a hand change to a line and a status change inside a locked
    period each raise `closed_period_changed`; locking the period again resolves them."""
    sample_ledger(engine)
    with Session(engine) as session:
        add_transfer(session, "late-1", "TRF_LATE00000001", 500_000, 0, "pending")
        session.commit()
    _import(engine, write_csv(tmp_path / "a.csv", ROWS[:3]))
    with write_session(engine) as session:
        closed = actions.close_period(
            session, FINANCE, "provider-wallet", "2026-11-01", "2026-11-30", now=NOW
        )
    assert closed.lock_id is not None
    later = write_csv(
        tmp_path / "b.csv",
        [*ROWS[:3], '2026-11-02,,X-1,bank charge,1.00,,"1,487,488.25"'],
    )
    _import(engine, later, now=NOW + dt.timedelta(minutes=1))
    assert _open(engine, "closed_period_changed") == {("statement_line", 4)}
    with write_session(engine) as session:
        actions.ignore(
            session, FINANCE, 1, ignored_as="funding", note="top-up", now=NOW + dt.timedelta(2)
        )
    assert ("statement_line", 1) in _open(engine, "closed_period_changed")
    confirmed_at = NOW + dt.timedelta(days=2, minutes=5)
    with write_session(engine) as session:
        transfer = session.execute(
            select(Transfer).where(col(Transfer.reference) == "late-1")
        ).scalar_one()
        transfer.status, transfer.confirmed = "successful", True
        assert transfer.id is not None
        emit(
            session,
            type=RelayEventType.TRANSFER_CONFIRMED,
            subject=Subject.TRANSFER,
            subject_id=transfer.id,
            reference="late-1",
            data={"reference": "late-1"},
            now=confirmed_at,
        )
    match_statements(engine, object(), now=confirmed_at + dt.timedelta(seconds=30))
    opened = _open(engine, "closed_period_changed")
    assert ("transfer", transfer.id) in opened and len(opened) == 3
    detail = _findings(engine, "closed_period_changed")[("transfer", transfer.id)].detail
    assert "became successful" in detail and "2026-11-01 to 2026-11-30" in detail
    with write_session(engine) as session:
        actions.close_period(
            session, FINANCE, "provider-wallet", "2026-11-01", "2026-11-30", now=confirmed_at
        )
    assert _open(engine, "closed_period_changed") == set()


def test_a_bad_import_of_many_unmatched_lines_sends_a_handful_of_alerts(
    engine: Engine, tmp_path: Path
) -> None:
    """600 unknown debits open 600 findings, alerted as one grouped message."""
    balance = 10_000_000
    rows = []
    for n in range(600):
        balance -= 100 + n
        rows.append(
            f"2026-11-02,,UNK-{n:04d},Unknown debit,{(100 + n) / 100:.2f},,{balance / 100:.2f}"
        )
    summary = _import(engine, write_csv(tmp_path / "bad.csv", rows))
    assert summary["unmatched"] == 600
    assert len(_open(engine, "unmatched_statement_line")) == 600
    inbox = AlertInbox()
    policy = Policy(0, 0, 3, 10**9, alerting=AlertRules())
    with running_server(inbox.app()) as base:
        sink = AppriseSink([base.replace("http", "json") + "/hook"], allow_insecure=True, timeout=5)
        sent = dispatch_alerts(engine, sink, now=NOW, policy=policy)
    assert sent == (1, 0)
    (message,) = inbox.received
    assert "600 × unmatched statement line (statement lines)" in message["title"]


def test_bulk_opened_findings_match_one_by_one_and_leave_existing_ones_alone(
    engine: Engine, tmp_path: Path
) -> None:
    """A bad import's unmatched lines are opened in bulk with one `finding.opened` each, in
    line order with their subject's sequence; a line whose finding was resolved is reopened
    (not duplicated) and an open one is left as it is."""
    rows = []
    balance = 10_000_000
    for n in range(30):
        balance -= 100
        rows.append(f"2026-11-02,,UNK-{n:04d},Unknown debit,1.00,,{balance / 100:.2f}")
    _import(engine, write_csv(tmp_path / "a.csv", rows[:10]))
    assert len(_open(engine, "unmatched_statement_line")) == 10
    with write_session(engine) as session:
        actions.ignore(session, FINANCE, 3, ignored_as="other", note="fee", now=NOW)
        actions.unmatch(session, FINANCE, 3, now=NOW)  # unmatched again: the finding reopens
    _import(engine, write_csv(tmp_path / "b.csv", rows), now=NOW + dt.timedelta(minutes=1))
    found = _findings(engine, "unmatched_statement_line")
    assert sorted(found) == [("statement_line", n) for n in range(1, 31)]
    assert all(f.resolved_at is None for f in found.values())
    with Session(engine) as session:
        events = session.execute(
            select(RelayEvent.subject_id, RelayEvent.type, RelayEvent.sequence)  # type: ignore[call-overload]
            .where(col(RelayEvent.subject) == "statement_line")
            .order_by(col(RelayEvent.id))
        ).all()
    opened = [(int(e[0]), e[2]) for e in events if e[1] == "finding.opened"]
    assert [i for i, _ in opened] == [*range(1, 11), 3, *range(11, 31)]
    assert [e[2] for e in events if int(e[0]) == 3] == [1, 2, 3]
    assert all(sequence == 1 for i, sequence in opened if i > 10)


def test_a_finding_on_a_line_reads_as_a_subject_everywhere(engine: Engine) -> None:
    """The findings queue and `findings list` name a line's finding by its id, with the
    line's amount; the pass's summary counts what it raised."""
    from ledger.finding_queue import FindingFilter, list_queue
    from reconcile.reports.findings import list_findings

    sample_ledger(engine)
    _import(engine, SAMPLE)
    with Session(engine) as session:
        (item,) = list_queue(session, FindingFilter(kind="unmatched_statement_line")).items
        listed = list_findings(session, kind="unmatched_statement_line")
    assert (item["subject"], item["reference"], item["amount"]) == (
        "statement_line",
        "1",
        50_000_000,
    )
    assert item["provider_reference"] == "FND_8C1D2E3F4A5B6C7D"
    assert [(f["subject"], f["reference"]) for f in listed] == [("statement_line", "1")]
    assert json.dumps(item)  # the record is plain JSON


def test_a_payout_that_becomes_final_after_the_import_is_found_missing_by_a_pass(
    engine: Engine, tmp_path: Path
) -> None:
    """A payout pending at import time and confirmed successful later (its relay event) is
    checked by the next pass: no line shows it on a covering statement, so it is missing."""
    sample_ledger(engine)
    with Session(engine) as session:
        add_transfer(session, "late-2", "TRF_LATE00000002", 500_000, 0, "pending")
        session.commit()
    _import(engine, SAMPLE)
    assert _open(engine, "missing_from_statement") == set()
    with write_session(engine) as session:
        transfer = session.execute(
            select(Transfer).where(col(Transfer.reference) == "late-2")
        ).scalar_one()
        transfer.status, transfer.confirmed = "successful", True
        assert transfer.id is not None
        emit(
            session,
            type=RelayEventType.TRANSFER_CONFIRMED,
            subject=Subject.TRANSFER,
            subject_id=transfer.id,
            reference="late-2",
            data={"reference": "late-2"},
            now=NOW,
        )
    counts = match_statements(engine, object(), now=NOW + dt.timedelta(seconds=30))
    assert counts["findings_raised"] >= 1
    assert _open(engine, "missing_from_statement") == {("transfer", transfer.id)}


def test_a_pending_reversal_is_applied_once_its_transfer_is_confirmed(
    engine: Engine, tmp_path: Path
) -> None:
    """A credit back for a transfer held successful but not yet confirmed by the provider
    keeps `reversal_pending`; the first reconcile pass after the confirmation reverses the
    transfer (source `statement`), opens `reversed_after_success` and clears the flag."""
    sample_ledger(engine)
    with Session(engine) as session:
        add_transfer(session, "inv-3001", "TRF_UNCONFIRMED01", 700_000, 0, "successful")
        session.flush()
        transfer = session.execute(
            select(Transfer).where(col(Transfer.reference) == "inv-3001")
        ).scalar_one()
        transfer.confirmed = False
        session.commit()
        transfer_id = transfer.id
    rows = [
        *ROWS[:3],
        '2026-11-02,,TRF_UNCONFIRMED01,Transfer / inv-3001,"7,000.00",,"1,480,489.25"',
        '2026-11-03,,TRF_UNCONFIRMED01,REVERSAL TRF_UNCONFIRMED01,,"7,000.00","1,487,489.25"',
    ]
    _import(engine, write_csv(tmp_path / "rev.csv", rows))
    with Session(engine) as session:
        line = session.get(StatementLine, 5)
        assert line is not None and line.state == "matched" and line.role == "reversal"
        assert line.reversal_pending is True
    match_statements(engine, object(), now=NOW + dt.timedelta(minutes=1))
    assert _open(engine, "reversed_after_success") == set()  # still not confirmed
    with write_session(engine) as session:
        found = session.get(Transfer, transfer_id)
        assert found is not None
        found.confirmed = True
    counts = match_statements(engine, object(), now=NOW + dt.timedelta(minutes=2))
    with Session(engine) as session:
        found = session.get(Transfer, transfer_id)
        line = session.get(StatementLine, 5)
        assert found is not None and line is not None
        assert (found.status, found.reversal_source) == ("reversed", "statement")
        assert line.reversal_pending is False
    assert _open(engine, "reversed_after_success") == {("transfer", transfer_id)}
    assert counts["findings_raised"] >= 1
    again = match_statements(engine, object(), now=NOW + dt.timedelta(minutes=3))
    assert again["findings_raised"] == 0


def test_the_pending_reversal_lookup_reads_its_partial_index(engine: Engine) -> None:
    """The pass finds the pending reversal credits through `ix_statement_line_reversal_pending`
    (only those lines), not a scan of every statement line."""
    from reconcile.statements.passes import _PENDING_REVERSALS

    sql = str(_PENDING_REVERSALS).replace(":limit", "10")
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            plan = " ".join(
                str(r[-1]) for r in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + sql)
            )
        else:
            connection.exec_driver_sql("SET enable_seqscan = off")
            plan = " ".join(str(r[0]) for r in connection.exec_driver_sql("EXPLAIN " + sql))
    assert "ix_statement_line_reversal_pending" in plan, plan
