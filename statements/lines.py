"""What a parsed statement is made of: typed lines, invalid lines with their reasons, and the
balances a format states for the whole statement. Pure data, shared by the parsers, the
matcher, the import shell and the tie-out."""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass


class Direction(enum.StrEnum):
    """Which way money moved on the account the statement is of."""

    DEBIT = "debit"
    CREDIT = "credit"


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """One movement read from a statement file.

    `number` is the 1-based line (CSV row, XLSX row, MT940 `:61:` field's line, CAMT entry's
    line) of the file, for error messages. `amount` is positive kobo; `direction` says its
    sign. `balance` is the running balance in kobo after this line (negative when overdrawn),
    as the file states it or, for formats that only state opening and closing balances
    (MT940, CAMT.053), as computed from the opening balance; None when the file has none.
    """

    number: int
    date: dt.date
    value_date: dt.date | None
    amount: int
    direction: Direction
    balance: int | None
    reference: str
    narration: str

    @property
    def signed_amount(self) -> int:
        """The amount with its sign: credits positive, debits negative."""
        return self.amount if self.direction is Direction.CREDIT else -self.amount


@dataclass(frozen=True, slots=True)
class InvalidLine:
    """A line of the file that could not be read: its 1-based number and why."""

    number: int
    reason: str


@dataclass(frozen=True, slots=True)
class StatedBalances:
    """Opening and closing balances a format states for the statement as a whole (MT940's
    `:60F:`/`:62F:`, CAMT.053's OPBD/CLBD); None where the format states none."""

    opening: int | None = None
    closing: int | None = None
