"""Seeding the ledger for console tests: transfers, findings and provider checks."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Engine

from ledger.db import write_session
from ledger.events.findings import raise_finding
from ledger.events.types import Subject
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import FindingKind

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


def transfer(engine: Engine, reference: str, *, amount: int = 500_000, **extra: Any) -> int:
    """Register an expected transfer; its id."""
    with write_session(engine) as session:
        row, _ = register_expected(session, ExpectedTransfer(reference, amount, **extra), now=T0)
        assert row.id is not None
        return row.id


def finding(
    engine: Engine, transfer_id: int, kind: FindingKind, detail: str = "amount 1 vs 2"
) -> int:
    """Open a finding on the transfer; its id."""
    with write_session(engine) as session:
        opened = raise_finding(
            session,
            subject=Subject.TRANSFER,
            subject_id=transfer_id,
            kind=kind,
            detail=detail,
            now=T0,
        )
        assert opened is not None and opened.id is not None
        return opened.id


class FakeProvider:
    """Answers every lookup with the transaction it was given (or raises what it was given)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    async def get_transaction(self, reference: str) -> Any:
        answer = self.answers.get(reference) or self.answers[reference.removeprefix("PRV-")]
        if isinstance(answer, Exception):
            raise answer
        return answer


def transaction(
    reference: str, *, amount: int, fee: int, status: str, failure_reason: str | None = None
) -> SimpleNamespace:
    """A provider transaction as the client returns it."""
    return SimpleNamespace(
        reference=f"PRV-{reference}",
        merchant_reference=reference,
        amount=amount,
        fee=fee,
        status=status,
        failure_reason=failure_reason,
    )
