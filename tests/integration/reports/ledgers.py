"""Varied ledgers built straight from the models, and figures computed independently of SQL."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Engine, insert

from ledger.db import write_session
from ledger.events.types import Subject
from ledger.models import Finding, Transfer

UTC = dt.UTC
LAGOS = ZoneInfo("Africa/Lagos")


@dataclass
class Spec:
    """One transfer as the test wants it; money in kobo, None where the ledger has nothing."""

    reference: str
    status: str
    created_at: dt.datetime
    amount: int | None
    fee: int | None
    webhook_amount: int | None = None
    webhook_fee: int | None = None
    provider_amount: int | None = None
    provider_fee: int | None = None
    confirmed: bool = False
    findings: list[tuple[str, str]] = field(default_factory=list)  # (kind, state)

    @property
    def moved(self) -> int:
        """The amount counted: provider's, else webhook's, else expected."""
        for value in (self.provider_amount, self.webhook_amount, self.amount):
            if value is not None:
                return value
        return 0

    @property
    def charged(self) -> int:
        """The fee counted: provider's, else webhook's, else the quote."""
        for value in (self.provider_fee, self.webhook_fee, self.fee):
            if value is not None:
                return value
        return 0

    @property
    def lagos_date(self) -> dt.date:
        """The Lagos day, through zoneinfo rather than the product's +1 hour rule."""
        return self.created_at.astimezone(LAGOS).date()


def random_ledger(seed: int, count: int, start: dt.datetime, days: int = 5) -> list[Spec]:
    """A mix of every shape: quotes only, webhook-only figures, provider figures, failed fees."""
    rng = random.Random(seed)
    specs = []
    for index in range(count):
        status = rng.choice(["successful", "successful", "failed", "pending"])
        created = start + dt.timedelta(seconds=rng.randrange(days * 86_400))
        amount = (
            rng.choice([None, rng.randrange(100, 50_000_000)])
            if index % 17 == 0
            else (rng.randrange(100, 50_000_000))
        )
        fee = rng.choice([None, 1000, 2500, 5000])
        spec = Spec(f"ref-{seed}-{index}", status, created, amount, fee)
        shape = rng.randrange(4)
        if status != "pending" and shape >= 1:
            spec.webhook_amount = rng.choice([amount or 0, rng.randrange(100, 50_000_000)])
            spec.webhook_fee = rng.choice([fee, 0, 1075, None])
        if status != "pending" and shape >= 2:
            spec.provider_amount = rng.choice([amount or 0, rng.randrange(100, 50_000_000)])
            spec.provider_fee = rng.choice([fee or 0, 0, 5375])
            spec.confirmed = True
        if status == "failed" and rng.random() < 0.5:
            spec.provider_fee = spec.provider_fee or 2500  # a failure that still charges a fee
            spec.provider_amount = spec.provider_amount or amount
            spec.confirmed = True
        for kind in rng.sample(["fee_mismatch", "amount_mismatch", "status_conflict"], k=2):
            if rng.random() < 0.3:
                spec.findings.append((kind, rng.choice(["open", "acknowledged", "resolved"])))
        specs.append(spec)
    return specs


def insert_ledger(engine: Engine, specs: list[Spec]) -> dict[str, int]:
    """Write the transfers and their findings; reference → transfer id."""
    ids: dict[str, int] = {}
    opened = dt.datetime(2025, 3, 1, 8, tzinfo=UTC)
    with write_session(engine) as session:
        for spec in specs:
            transfer = Transfer(
                reference=spec.reference,
                provider_reference=f"prov-{spec.reference}",
                origin="initiated",
                status=spec.status,
                confirmed=spec.confirmed,
                amount=spec.amount,
                fee=spec.fee,
                webhook_amount=spec.webhook_amount,
                webhook_fee=spec.webhook_fee,
                provider_amount=spec.provider_amount,
                provider_fee=spec.provider_fee,
                created_at=spec.created_at,
                updated_at=spec.created_at,
            )
            session.add(transfer)
            session.flush()
            assert transfer.id is not None
            ids[spec.reference] = transfer.id
            for kind, state in spec.findings:
                session.add(
                    Finding(
                        subject=Subject.TRANSFER,
                        subject_id=transfer.id,
                        kind=kind,
                        detail=f"{kind} on {spec.reference}",
                        opened_at=opened,
                        resolved_at=opened if state == "resolved" else None,
                        acknowledged_at=opened if state == "acknowledged" else None,
                        ack_note="checked with provider" if state == "acknowledged" else None,
                    )
                )
    return ids


def bulk_insert(engine: Engine, count: int, start: dt.datetime, *, prefix: str = "bulk") -> None:
    """Many plain successful transfers through one Core executemany (for the streaming test)."""
    rows = [
        {
            "reference": f"{prefix}-{index}",
            "origin": "initiated",
            "status": "successful",
            "confirmed": True,
            "amount": 100_000 + index,
            "fee": 1000,
            "check_attempts": 0,
            "not_found_count": 0,
            "created_at": start + dt.timedelta(seconds=index),
            "updated_at": start,
        }
        for index in range(count)
    ]
    with write_session(engine) as session:
        session.execute(insert(Transfer.__table__), rows)  # type: ignore[attr-defined]


def expected_figures(specs: list[Spec]) -> dict[str, Any]:
    """The report's money figures, computed in Python from the specs alone."""
    by_status: dict[str, dict[str, int]] = {
        name: {"count": 0, "amount": 0, "fee": 0, "unconfirmed": 0}
        for name in ("successful", "failed", "pending", "reversed")
    }
    days: dict[dt.date, dict[str, int]] = defaultdict(
        lambda: {"count": 0, "amount": 0, "fee": 0, "failed": 0}
    )
    for spec in specs:
        line = by_status[spec.status]
        line["count"] += 1
        line["amount"] += spec.moved
        line["fee"] += spec.charged
        if spec.status != "pending" and not spec.confirmed:
            line["unconfirmed"] += 1
        day = days[spec.lagos_date]
        day["count"] += 1
        if spec.status == "successful":
            day["amount"] += spec.moved
        if spec.status in ("successful", "failed", "reversed"):
            day["fee"] += spec.charged
        if spec.status == "failed":
            day["failed"] += 1
    fees_failed = by_status["failed"]["fee"]
    # A reversed transfer's amount came back; its fee did not (PRODUCT.md: Reversals).
    fees_total = by_status["successful"]["fee"] + fees_failed + by_status["reversed"]["fee"]
    open_kinds = Counter(
        kind for spec in specs for kind, state in spec.findings if state != "resolved"
    )
    return {
        "total": len(specs),
        "by_status": by_status,
        "fees_total": fees_total,
        "fees_on_failed": fees_failed,
        "wallet_debit": by_status["successful"]["amount"] + fees_total,
        "days": {day: figures for day, figures in days.items()},
        "open_kinds": open_kinds,
    }
