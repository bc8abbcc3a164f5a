"""MT940 statements, streaming: the file is split into its fields as it is read and each
field is parsed with the `mt-940` package's tag grammar; running balances are computed from
the opening balance `:60F:` (MT940 states no balance per line)."""

from __future__ import annotations

import codecs
import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import mt940
from mt940 import tags

from statements.errors import FieldValueError, StatementFormatError
from statements.lines import Direction, InvalidLine, ParsedLine, StatedBalances
from statements.money import kobo_from_mt940

_FIELD = re.compile(r":(?P<tag>[0-9]{2}[A-Z]?):(?P<value>.*)")
# A field longer than this is no field of a statement (a :86: is at most 6 x 65 characters
# by the standard; some banks send more, none this much).
_MAX_FIELD = 16 * 1024
# MT940's status marks: a reversal of a credit (RC) takes money out like a debit.
_DEBIT_MARKS = frozenset({"D", "RC"})
# The package's tag grammars: compiled patterns, like _FIELD.
_STATEMENT = tags.Statement()
_BALANCE = tags.BalanceBase()


@dataclass(slots=True)
class _Field:
    tag: str
    number: int
    value: str


class Mt940Statement:
    """One MT940 file: `lines()` yields its `:61:` movements in order; `stated` holds the
    first opening and the last closing balance once `lines()` is exhausted."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.stated = StatedBalances()
        # The package's tag parsers need a Transactions object for their options.
        self._transactions = mt940.models.Transactions()

    def lines(self) -> Iterator[ParsedLine | InvalidLine]:
        """The movements, each numbered by the line its `:61:` field starts on."""
        balance: int | None = None
        pending: _Field | None = None
        narration: list[str] = []
        seen_field = False
        for field in _fields(self._stream):
            seen_field = True
            if field.tag == "86" and pending is not None:
                # :86: wraps at 65 characters wherever the text is, so its lines are glued.
                narration.append(field.value.replace("\n", ""))
                continue
            if pending is not None:
                line = self._line(pending, "".join(narration), balance)
                if isinstance(line, ParsedLine):
                    balance = line.balance
                yield line
                pending, narration = None, []
            if field.tag == "61":
                if balance is None:
                    raise StatementFormatError(
                        f"line {field.number}: a :61: line before any opening balance :60F:"
                    )
                pending = field
            elif field.tag in {"60F", "60M", "60"}:
                balance = self._balance(field)
                if self.stated.opening is None:
                    self.stated = StatedBalances(opening=balance)
            elif field.tag in {"62F", "62M", "62"}:
                self.stated = StatedBalances(self.stated.opening, self._balance(field))
        if pending is not None:
            yield self._line(pending, "".join(narration), balance)
        if not seen_field:
            raise StatementFormatError("not an MT940 statement: no :20:, :60F:, :61: fields")

    def _balance(self, field: _Field) -> int:
        match = _BALANCE.re.match(field.value)
        try:
            if match is None:
                raise FieldValueError("it is not a mark, date, currency and amount")
            kobo = kobo_from_mt940(match["amount"] or "")
        except FieldValueError as exc:
            raise StatementFormatError(
                f"line {field.number}: the balance :{field.tag}: cannot be read: {exc}"
            ) from exc
        return -kobo if match["status"].upper() == "D" else kobo

    def _line(self, field: _Field, narration: str, balance: int | None) -> ParsedLine | InvalidLine:
        # The tag's own pattern, matched here rather than through Tag.parse, which logs every
        # mismatch at error level.
        match = _STATEMENT.re.match(field.value)
        if match is None:
            return InvalidLine(field.number, f":61: {_cut(field.value)} is not a statement line")
        raw = match.groupdict()
        try:
            amount = kobo_from_mt940(raw["amount"] or "")
            data = _STATEMENT(self._transactions, dict(raw))
        except FieldValueError as exc:
            return InvalidLine(field.number, f":61: amount {exc}")
        except ValueError as exc:
            # The package builds the value and entry dates; a 13th month or a 32nd day fails.
            return InvalidLine(field.number, f":61: {_cut(field.value)} has an invalid date: {exc}")
        mark = str(raw["status"]).upper()
        direction = Direction.DEBIT if mark in _DEBIT_MARKS else Direction.CREDIT
        signed = -amount if direction is Direction.DEBIT else amount
        # The package's Date subclass becomes a plain date: lines are compared and stored.
        value_date = _plain_date(data["date"])
        entry = data.get("entry_date")
        entry_date = _plain_date(entry) if entry else value_date
        return ParsedLine(
            number=field.number,
            date=entry_date,
            value_date=value_date,
            amount=amount,
            direction=direction,
            balance=None if balance is None else balance + signed,
            reference=_reference(raw["customer_reference"], raw["bank_reference"]),
            narration=narration.strip(),
        )


def _reference(customer: str | None, bank: str | None) -> str:
    """The `:61:` reference: the customer reference, or the bank reference when the customer
    one is absent (`NONREF`) or the bank one is its untruncated form (the customer reference
    is cut at 16 characters)."""
    customer, bank = (customer or "").strip(), (bank or "").strip()
    if bank and (not customer or customer.upper() == "NONREF" or bank.startswith(customer)):
        return bank
    return customer


def _fields(stream: BinaryIO) -> Iterator[_Field]:
    """The file's fields in order: a field starts on a line beginning `:TAG:`; the lines up to
    the next field continue it. SWIFT header blocks (`{1:...}{2:...}{4:`) and the closing
    `-}` are skipped. Lines are read with a length limit, so memory stays bounded."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    current: _Field | None = None
    number = 0
    try:
        while raw := stream.readline(_MAX_FIELD + 1):
            number += 1
            line = decoder.decode(raw).rstrip("\r\n")
            if line.startswith("{"):
                # A header block line; the text block {4: may hold the first field.
                line = line.split("{4:", 1)[1] if "{4:" in line else ""
            match = _FIELD.match(line)
            if match:
                if current is not None:
                    yield current
                current = _Field(match["tag"], number, match["value"])
            elif line.strip() in {"", "-"} or line.startswith("-}"):
                continue
            elif current is None:
                raise StatementFormatError(f"line {number} is not an MT940 field: {_cut(line)}")
            else:
                current.value += "\n" + line
            if current is not None and len(current.value) > _MAX_FIELD:
                raise StatementFormatError(
                    f"line {current.number}: the :{current.tag}: field is longer than "
                    f"{_MAX_FIELD} characters"
                )
        if current is not None:
            yield current
    except UnicodeDecodeError as exc:
        raise StatementFormatError(f"line {number} is not UTF-8 text") from exc


def _plain_date(value: object) -> dt.date:
    if not isinstance(value, dt.date):  # pragma: no cover - the package always builds a Date
        raise TypeError(f"not a date: {value!r}")
    return dt.date(value.year, value.month, value.day)


def _cut(text: str) -> str:
    text = text.replace("\n", " ")
    return f'"{text[:60]}…"' if len(text) > 60 else f'"{text}"'
