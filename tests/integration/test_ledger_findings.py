"""Findings are a database fact: one row per transfer and kind, reopened if they recur."""

from __future__ import annotations

from sqlalchemy import Engine, func, select

from ledger.db import read_session, write_session
from ledger.events.types import Subject
from ledger.findings import acknowledge_finding, raise_finding, resolve_finding
from ledger.models import Finding
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import FindingKind, utcnow


def test_a_finding_is_raised_once_and_reopened_after_resolution(engine: Engine) -> None:
    """Raising twice opens one row; resolving then raising reopens the same row."""
    now = utcnow()
    with write_session(engine) as session:
        transfer, created = register_expected(
            session, ExpectedTransfer("ref-1", 100_000, 1000), now=now
        )
        assert created
        first = raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=transfer.id or 0,
            kind=FindingKind.FEE_MISMATCH,
            detail="a",
            now=now,
        )
        second = raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=transfer.id or 0,
            kind=FindingKind.FEE_MISMATCH,
            detail="b",
            now=now,
        )
        assert first is not None
        assert second is None
        assert resolve_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=transfer.id or 0,
            kind=FindingKind.FEE_MISMATCH,
            now=now,
        )
        again = raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=transfer.id or 0,
            kind=FindingKind.FEE_MISMATCH,
            detail="c",
            now=now,
        )
        assert again is not None and again.id == first.id
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Finding)).scalar_one() == 1


def test_a_finding_that_recurs_after_acknowledgement_is_unacknowledged(engine: Engine) -> None:
    """An acknowledgement covers one occurrence: a reopened finding must alert again."""
    now = utcnow()
    with write_session(engine) as session:
        transfer, _ = register_expected(session, ExpectedTransfer("ref-2", 5, None), now=now)
        tid = transfer.id or 0
        finding = raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=tid,
            kind=FindingKind.STALE_PENDING,
            detail="old",
            now=now,
        )
        assert finding is not None and finding.id is not None
        acknowledge_finding(session, finding_id=finding.id, note="known", now=now)
        resolve_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=tid,
            kind=FindingKind.STALE_PENDING,
            now=now,
        )
        again = raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=tid,
            kind=FindingKind.STALE_PENDING,
            detail="new",
            now=now,
        )
    assert again is not None
    assert again.acknowledged_at is None and again.ack_note is None
