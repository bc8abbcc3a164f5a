"""The ledger's gauges: right figures on both databases, and a scrape that still answers (and
says so) when the database is down."""

from __future__ import annotations

import datetime as dt

from prometheus_client import CollectorRegistry, generate_latest
from sqlalchemy import Engine, update

from ledger.db import create_db_engine, write_session
from ledger.events.findings import raise_finding
from ledger.events.types import Subject
from ledger.lease import record_last_pass
from ledger.models import RelayEndpoint, Transfer
from ledger.types import FindingKind, utcnow
from telemetry.gauges import LedgerGauges
from tests.support import relay as support
from tests.support.servers import free_port

NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)


def _samples(collector: LedgerGauges) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry()
    registry.register(collector)
    text = generate_latest(registry).decode()
    assert "payrecon_ledger_up" in text  # rendered as a whole, as a scrape does
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in collector.collect()
        for sample in family.samples
    }


def test_gauges_read_the_ledger(engine: Engine) -> None:
    """Open findings by kind, the oldest pending transfer, due rows, the last pass and the
    endpoints' state come from the ledger as it stands."""
    ids = support.add_transfers(engine, 3)
    endpoint_id, _ = support.add_endpoint(engine, "http://127.0.0.1:9/hook")
    support.emit_events(engine, ids[:1])
    with write_session(engine) as session:
        session.execute(
            update(Transfer)
            .where(Transfer.id == ids[0])
            .values(status="pending", created_at=NOW - dt.timedelta(hours=2), next_check_at=NOW)
        )
        session.execute(
            update(Transfer)
            .where(Transfer.id.in_(ids[1:]))
            .values(status="successful", next_check_at=None)
        )
        raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=ids[1],
            kind=FindingKind.AMOUNT_MISMATCH,
            detail="x",
            now=NOW - dt.timedelta(minutes=30),
            reference="r",
            endpoints=[],
        )
        session.execute(
            update(RelayEndpoint).where(RelayEndpoint.id == endpoint_id).values(enabled=False)
        )
        record_last_pass(session, owner="me", now=NOW - dt.timedelta(seconds=40))
        # An older pass reported late never moves the time back.
        record_last_pass(session, owner="late", now=NOW - dt.timedelta(hours=1))
    samples = _samples(LedgerGauges(engine, clock=lambda: NOW))
    assert samples[("payrecon_findings_open", (("kind", "amount_mismatch"),))] == 1
    assert samples[("payrecon_findings_open", (("kind", "fee_mismatch"),))] == 0
    assert (
        samples[("payrecon_findings_oldest_open_seconds", (("kind", "amount_mismatch"),))] == 1800
    )
    assert samples[("payrecon_transfers_pending_oldest_seconds", ())] == 7200
    assert samples[("payrecon_reconcile_due", (("subject", "transfer"),))] == 1
    assert samples[("payrecon_reconcile_due", (("subject", "collection"),))] == 0
    last = samples[("payrecon_reconcile_last_pass_timestamp_seconds", ())]
    assert last == (NOW - dt.timedelta(seconds=40)).timestamp()
    endpoint = (("endpoint", str(endpoint_id)),)
    assert samples[("payrecon_relay_endpoint_disabled", endpoint)] == 1
    assert samples[("payrecon_relay_endpoint_pending", endpoint)] == 1
    assert samples[("payrecon_ledger_up", ())] == 1
    assert samples[("payrecon_scrape_errors_total", (("collector", "findings"),))] == 0


def test_statement_gauges_read_each_account(database_url: str, engine: Engine) -> None:
    """Per account: its unmatched lines, and the start (Lagos) of its latest line's day."""
    from tests.integration.statements.ledger_rows import SAMPLE
    from tests.support.cli import run_cli

    result = run_cli(database_url, "statement", "import", str(SAMPLE), "--mapping", "sandbox")
    assert result.exit_code == 0, result.output
    samples = _samples(LedgerGauges(engine, clock=lambda: NOW))
    account = (("account", "provider-wallet"),)
    assert samples[("payrecon_statement_unmatched_lines", account)] == 7  # no ledger behind it
    latest = dt.datetime(2026, 11, 3, 23, 0, tzinfo=dt.UTC).timestamp()  # 4 Nov, Lagos
    assert samples[("payrecon_statement_last_line_timestamp_seconds", account)] == latest
    assert samples[("payrecon_scrape_errors_total", (("collector", "statements"),))] == 0


def test_an_empty_ledger_shows_zeros(engine: Engine) -> None:
    """Before any transfer or pass, the gauges are 0 rather than missing."""
    samples = _samples(LedgerGauges(engine, clock=utcnow))
    assert samples[("payrecon_transfers_pending_oldest_seconds", ())] == 0
    assert samples[("payrecon_reconcile_last_pass_timestamp_seconds", ())] == 0
    assert samples[("payrecon_findings_open", (("kind", "stale_pending"),))] == 0


def test_a_scrape_with_the_database_down_answers_and_counts_the_error() -> None:
    """Nothing listens where the ledger should be: the scrape answers at once with
    payrecon_ledger_up 0 and one error per gauge, without trying each gauge."""
    down = create_db_engine(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/none")
    try:
        collector = LedgerGauges(down)
        first = _samples(collector)
        second = _samples(collector)
    finally:
        down.dispose()
    assert first[("payrecon_ledger_up", ())] == 0
    assert second[("payrecon_scrape_errors_total", (("collector", "findings"),))] >= 2
    assert second[("payrecon_scrape_errors_total", (("collector", "relay_endpoints"),))] >= 2
    assert not any(name == "payrecon_findings_open" for name, _ in second)
