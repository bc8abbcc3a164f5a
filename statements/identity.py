"""A statement line's identity: what makes re-importing a file, or an export overlapping an
earlier one, store each movement once (docs/rules.md "Statements and period tie-out", Import
rules: account, date, amount, direction, reference, balance and the line's position among
identical lines of that day)."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator

from statements.errors import StatementFormatError
from statements.lines import ParsedLine

_SEPARATOR = "\x1f"  # the ASCII unit separator: in no field a parser yields after strip()


def line_identities(lines: Iterable[ParsedLine], *, account: str) -> Iterator[str]:
    """One identity per line, in order: the SHA-256 hex of the account, date, amount,
    direction, reference (spaces collapsed), balance, and how many identical lines came
    before it on that day. The same movement gets the same identity in every export that
    holds its whole day up to it (exports start at the start of a day and may stop
    anywhere). Memory holds one day's counts: the lines of a day must be together
    (StatementFormatError otherwise, naming the line)."""
    day: dt.date | None = None
    seen_today: Counter[tuple[int, str, str, str]] = Counter()
    finished: set[dt.date] = set()
    for line in lines:
        if line.date != day:
            if line.date in finished:
                raise StatementFormatError(
                    f"line {line.number}: dated {line.date.isoformat()} after lines of another "
                    "day; a statement keeps each day's lines together"
                )
            if day is not None:
                finished.add(day)
            day, seen_today = line.date, Counter()
        reference = " ".join(line.reference.split())
        balance = "-" if line.balance is None else str(line.balance)
        fields = (line.amount, line.direction.value, reference, balance)
        position = seen_today[fields]
        seen_today[fields] += 1
        key = _SEPARATOR.join(
            (
                account,
                line.date.isoformat(),
                str(line.amount),
                line.direction.value,
                reference,
                balance,
                str(position),
            )
        )
        yield hashlib.sha256(key.encode("utf-8")).hexdigest()
