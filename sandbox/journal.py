"""The wallet's (and the merchant bank account's) journal: every money movement, in order.

Each movement carries its time, direction, amount, reference, narration and the running
balance after it, so a statement for any range of Lagos days is a slice of the journal.
Pure: the World posts to it under its own lock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from sandbox.models import iso

# Africa/Lagos is UTC+1 all year (no daylight saving since 1919), so a fixed offset is exact
# and needs no time-zone database.
LAGOS = timezone(timedelta(hours=1), "WAT")

WALLET_ACCOUNT = "SANDBOX-WALLET"
MERCHANT_BANK_ACCOUNT_NUMBER = "0123456789"
BANK_ACCOUNT = f"SANDBOX-BANK-{MERCHANT_BANK_ACCOUNT_NUMBER}"
BANK_OPENING_BALANCE = 10_000_000_000  # ₦100,000,000.00
CURRENCY = "NGN"


class Direction(enum.StrEnum):
    """Which way a movement moves the balance."""

    DEBIT = "debit"
    CREDIT = "credit"


class Kind(enum.StrEnum):
    """What caused a movement (shown by GET /_sandbox/wallet/movements)."""

    PAYOUT = "payout"
    PAYOUT_FEE = "payout_fee"
    REFUND = "refund"
    REVERSAL = "reversal"
    COLLECTION = "collection"
    FUNDING = "funding"
    OUTSIDE_PAYOUT = "outside_payout"  # the statement_unknown_debit fault
    OUTSIDE_PAYOUT_FEE = "outside_payout_fee"
    ADJUSTMENT = "adjustment"  # POST /_sandbox/wallet {"balance"}


def lagos_day(timestamp: float) -> date:
    """The Africa/Lagos calendar day of a POSIX timestamp."""
    return datetime.fromtimestamp(timestamp, UTC).astimezone(LAGOS).date()


@dataclass(frozen=True)
class Movement:
    """One line of the journal; `amount` is positive kobo, `balance` is after it."""

    sequence: int  # 1 = the journal's first movement
    time: float
    kind: Kind
    direction: Direction
    amount: int
    reference: str
    narration: str
    balance: int

    @property
    def day(self) -> date:
        """Its Lagos calendar day (entry and value date are the same)."""
        return lagos_day(self.time)

    @property
    def signed(self) -> int:
        """The amount with the sign it has on the balance."""
        return self.amount if self.direction is Direction.CREDIT else -self.amount

    def record(self) -> dict[str, Any]:
        """As GET /_sandbox/wallet/movements shows it."""
        return {
            "sequence": self.sequence,
            "time": iso(self.time),
            "date": self.day.isoformat(),
            "kind": self.kind.value,
            "direction": self.direction.value,
            "amount": self.amount,
            "reference": self.reference,
            "narration": self.narration,
            "balance": self.balance,
        }


@dataclass(frozen=True)
class Statement:
    """A slice of a journal: its lines and the balances around them (kobo)."""

    account: str
    opening_balance: int
    closing_balance: int
    first_day: date
    last_day: date
    lines: tuple[Movement, ...]


class Journal:
    """An account's balance and every movement that made it (the caller holds the lock)."""

    def __init__(self, account: str, opening_balance: int) -> None:
        self.account = account
        self.opening_balance = opening_balance
        self._balance = opening_balance
        self._movements: list[Movement] = []

    @property
    def balance(self) -> int:
        """The balance after the last movement."""
        return self._balance

    def post(
        self,
        *,
        time: float,
        kind: Kind,
        direction: Direction,
        amount: int,
        reference: str,
        narration: str,
    ) -> Movement | None:
        """Move the balance by `amount` (a negative amount moves the other way); None for 0."""
        if amount == 0:
            return None
        if amount < 0:
            amount = -amount
            direction = Direction.CREDIT if direction is Direction.DEBIT else Direction.DEBIT
        self._balance += amount if direction is Direction.CREDIT else -amount
        movement = Movement(
            sequence=len(self._movements) + 1,
            time=time,
            kind=kind,
            direction=direction,
            amount=amount,
            reference=reference,
            narration=narration,
            balance=self._balance,
        )
        self._movements.append(movement)
        return movement

    def movements(self) -> list[Movement]:
        """Every movement, oldest first."""
        return list(self._movements)

    def statement(
        self, since: date | None, until: date | None, *, today: date, drop: int = 0
    ) -> Statement:
        """The lines from `since` to `until` (Lagos days, inclusive; None = unbounded).

        `drop` (the statement_drop_line fault) leaves out the journal's movement with that
        sequence number; the other lines keep the balances they really had, so a reader sees
        the gap. The opening and closing balances are the true ones.
        """
        opening = self.opening_balance
        lines: list[Movement] = []
        closing: int | None = None
        first_seen: date | None = None  # the first and last day with a movement in range
        last_seen: date | None = None
        for movement in self._movements:
            day = movement.day
            if since is not None and day < since:
                opening = movement.balance
                continue
            if until is not None and day > until:
                break
            closing = movement.balance
            first_seen = first_seen or day
            last_seen = day
            if movement.sequence != drop:
                lines.append(movement)
        first = since or first_seen or today
        last = until or last_seen or first
        return Statement(
            account=self.account,
            opening_balance=opening,
            closing_balance=opening if closing is None else closing,
            first_day=first,
            last_day=max(first, last),
            lines=tuple(lines),
        )
