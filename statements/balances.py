"""The balance chain of a statement: each line's balance must be the previous one plus or
minus its amount, and the closing balance the opening one plus every movement (docs/rules.md
"Statements and period tie-out": a break is a `statement_balance_gap`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from statements.lines import ParsedLine, StatedBalances


@dataclass(frozen=True, slots=True)
class BalanceBreak:
    """A place where the chain breaks: between `after_line` (None: the opening balance) and
    `before_line` (None: the closing balance) the balance moved by more, or less, than the
    lines say; `expected` is what the chain gives, `stated` what the file says."""

    after_line: int | None
    before_line: int | None
    expected: int
    stated: int

    @property
    def difference(self) -> int:
        """Kobo the file's balance is above (positive) or below the chain: the sum of the
        movements missing there."""
        return self.stated - self.expected


def balance_breaks(
    lines: Iterable[ParsedLine], stated: StatedBalances | None = None
) -> Iterator[BalanceBreak]:
    """Every break of the chain, in file order, reading `lines` once. The chain starts at
    the stated opening balance (else at the first line's balance), carries on through lines
    that state no balance, and picks up again at each stated balance after a break, so one
    missing line is one break."""
    stated = stated or StatedBalances()
    balance, previous = stated.opening, None
    for line in lines:
        expected = None if balance is None else balance + line.signed_amount
        if line.balance is None:
            balance = expected
        else:
            if expected is not None and expected != line.balance:
                yield BalanceBreak(previous, line.number, expected, line.balance)
            balance = line.balance
        previous = line.number
    if stated.closing is not None and balance is not None and balance != stated.closing:
        yield BalanceBreak(previous, None, balance, stated.closing)
