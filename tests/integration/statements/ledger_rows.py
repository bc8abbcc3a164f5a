"""Transfers and collections written straight into a test ledger, and the sample statement."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session

from ledger.models import Collection, Transfer

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "docs" / "statements" / "sandbox.csv"
HEADER = "Date,Value Date,Reference,Narration,Debit,Credit,Balance\n"
# Midday in Lagos on the sample's days.
DAY2 = dt.datetime(2026, 11, 2, 11, 0, tzinfo=dt.UTC)
DAY3 = dt.datetime(2026, 11, 3, 11, 0, tzinfo=dt.UTC)


def add_transfer(
    session: Session,
    reference: str,
    provider_reference: str | None,
    amount: int,
    fee: int,
    status: str,
    created_at: dt.datetime = DAY2,
) -> None:
    """One confirmed (or pending) transfer of the ledger."""
    session.add(
        Transfer(
            reference=reference,
            provider_reference=provider_reference,
            origin="expected",
            status=status,
            confirmed=status != "pending",
            amount=amount,
            fee=fee,
            provider_fee=fee if status != "pending" else None,
            created_at=created_at,
            updated_at=created_at,
        )
    )


def sample_ledger(engine: Engine) -> None:
    """The ledger behind docs/statements/sandbox.csv: inv-1001 paid, inv-1002 failed
    (its fee kept), order-77 collected ₦50,000 less a ₦750 fee."""
    with Session(engine) as session:
        add_transfer(session, "inv-1001", "TRF_D7731322DE471BE7", 1_250_000, 1075, "successful")
        add_transfer(session, "inv-1002", "TRF_0F9E8D7C6B5A4F3E", 25_000_000, 1075, "failed", DAY3)
        session.add(
            Collection(
                reference="order-77",
                provider_reference="COL_5A0B9C2D7E1F3A4B",
                origin="created",
                status="successful",
                confirmed=True,
                amount=5_000_000,
                amount_paid=5_000_000,
                fee=75_000,
                provider_fee=75_000,
                paid_at=DAY3,
                created_at=DAY2,
                updated_at=DAY3,
            )
        )
        session.commit()


def write_csv(path: Path, rows: list[str]) -> Path:
    """A statement in the sandbox's CSV shape with `rows` under the header."""
    path.write_text(HEADER + "".join(row + "\n" for row in rows), encoding="utf-8")
    return path
