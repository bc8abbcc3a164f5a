"""`payrecon findings ack`, run as a user runs it, writes `finding.acknowledged`."""

from __future__ import annotations

import subprocess

from sqlalchemy import select

from ledger.db import create_db_engine, read_session, write_session
from ledger.events import payloads
from ledger.events.types import Subject
from ledger.findings import raise_finding
from ledger.models import Finding
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import FindingKind, utcnow
from tests.integration.relay.outbox_helpers import add_endpoints, written
from tests.support.processes import PAYRECON, payrecon_env


def test_findings_ack_writes_finding_acknowledged(database_url: str) -> None:
    """The CLI's acknowledgement writes the event, numbered in the transfer's sequence, with a
    delivery for the endpoint taking the default types."""
    engine = create_db_engine(database_url)
    try:
        ids = add_endpoints(engine)
        with write_session(engine) as session:
            transfer, _ = register_expected(
                session, ExpectedTransfer("ACK-1", 1000, 10), now=utcnow()
            )
            assert transfer.id is not None
            finding = raise_finding(
                session,
                subject=Subject.TRANSFER,
                subject_id=transfer.id,
                kind=FindingKind.STALE_PENDING,
                detail="pending for 3 days",
                now=utcnow(),
            )
            assert finding is not None and finding.id is not None
            finding_id = finding.id
        result = subprocess.run(
            [*PAYRECON, "findings", "ack", str(finding_id), "--note", "chasing the bank"],
            env=payrecon_env(database_url=database_url),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        events = written(engine)
        with read_session(engine) as session:
            stored = session.execute(select(Finding)).scalar_one()
        assert [(e.type, e.reference, e.sequence, e.endpoints) for e in events] == [
            ("finding.acknowledged", "ACK-1", 1, [ids.default])
        ]
        assert events[0].data == payloads.finding(stored, reference="ACK-1")
        assert events[0].data["acknowledged_at"] is not None
    finally:
        engine.dispose()
