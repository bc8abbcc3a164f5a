"""The rows of a CSV or XLSX export read through a mapping: preamble, header, lines, footer.
The formats give rows of cells with their 1-based row numbers; this module turns them into
ParsedLine or InvalidLine, one row at a time."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import cast

from statements.errors import FieldValueError, StatementFormatError
from statements.lines import Direction, InvalidLine, ParsedLine
from statements.mapping import Mapping
from statements.money import Amounts, kobo_from_cell, plain_naira, shown

# A cell as the formats give it: text from CSV; text, a number, a date or None from XLSX.
Cell = object


@dataclass(frozen=True, slots=True)
class _Positions:
    """Where each of the mapping's columns is in the header row (0-based)."""

    by_key: dict[str, int]

    def cell(self, cells: Sequence[Cell], key: str) -> Cell:
        index = self.by_key.get(key)
        if index is None or index >= len(cells):
            return None
        return cells[index]


def read_rows(
    rows: Iterable[tuple[int, Sequence[Cell]]], mapping: Mapping, *, texts: bool = False
) -> Iterator[ParsedLine | InvalidLine]:
    """The lines of the table in `rows` (row number, cells), as the mapping says: the first
    `skip_rows` rows skipped, the next one the header, then one line per row until a row
    with a `stop_at` text; blank rows and rows with a `skip_rows_with` text skipped.
    `texts`: every cell is a str (CSV), so rows are checked without asking each cell."""
    iterator = iter(rows)
    positions: _Positions | None = None
    skipped = 0
    for number, cells in iterator:
        if skipped < mapping.skip_rows:
            skipped += 1
            continue
        positions = _header(number, cells, mapping)
        break
    if positions is None:
        raise StatementFormatError(
            f"the file ends before its header row (row {mapping.skip_rows + 1} of mapping "
            f"{mapping.name})"
        )
    stop_at = {text.casefold() for text in mapping.stop_at}
    skip_with = {text.casefold() for text in mapping.skip_rows_with}
    quick = _Quick.of(positions, mapping, texts=texts)
    for number, cells in iterator:
        if stop_at or skip_with or quick is None:
            found = {_text(cell).casefold() for cell in cells} - {""}
            if not found:
                continue
            if found & stop_at:
                return
            if found & skip_with:
                continue
        elif texts:
            if not "".join(cast("Sequence[str]", cells)).strip():
                continue  # a blank row (joined: one call for the whole row)
        elif not any(_text(cell) for cell in cells):
            continue  # a blank row
        line = None if quick is None else quick.line(number, cells)
        yield line or _line(number, cells, positions, mapping)


@dataclass(slots=True)
class _Quick:
    """The common row read fast: text cells, a date in the mapping's format, plain naira in
    separate debit and credit columns. Anything else (a blank date, a sign, a misplaced
    comma, a number cell, an error) is left to `_line`, which reads every row and words
    every error, so the two never disagree on a row both read."""

    date: int
    value_date: int | None
    debit: int
    credit: int
    balance: int | None
    reference: int | None
    narration: int
    date_format: str
    width: int
    days: dict[str, dt.date]
    texts: bool  # every cell is a str (CSV): not asked cell by cell

    @classmethod
    def of(cls, positions: _Positions, mapping: Mapping, *, texts: bool = False) -> _Quick | None:
        at = positions.by_key
        if mapping.amounts is not Amounts.NAIRA or "debit" not in at or "credit" not in at:
            return None
        return cls(
            date=at["date"],
            value_date=at.get("value_date"),
            debit=at["debit"],
            credit=at["credit"],
            balance=at.get("balance"),
            reference=at.get("reference"),
            narration=at["narration"],
            date_format=mapping.date_format,
            width=max(at.values()) + 1,
            days={},
            texts=texts,
        )

    def day(self, text: str) -> dt.date | None:
        day = self.days.get(text)
        if day is None:
            try:
                day = _strptime(text, self.date_format)
            except ValueError:
                return None
            if len(self.days) < 4096:  # a statement repeats a few hundred dates
                self.days[text] = day
        return day

    def line(self, number: int, cells: Sequence[Cell]) -> ParsedLine | None:
        """The row's line, or None when `_line` must read it."""
        if len(cells) < self.width or (
            not self.texts and not all(type(cell) is str for cell in cells)
        ):
            return None
        texts = cast("Sequence[str]", cells)
        date_text = texts[self.date].strip()
        date = self.day(date_text) if date_text else None
        value_date = None
        if self.value_date is not None and (value_text := texts[self.value_date].strip()):
            value_date = self.day(value_text)
            if value_date is None:
                return None
        debit_text, credit_text = texts[self.debit].strip(), texts[self.credit].strip()
        debit = plain_naira(debit_text) if debit_text else 0
        credit = plain_naira(credit_text) if credit_text else 0
        if date is None or debit is None or credit is None or bool(debit) == bool(credit):
            return None
        balance = None
        if self.balance is not None and (balance_text := texts[self.balance].strip()):
            balance = plain_naira(balance_text)
            if balance is None:
                return None
        return ParsedLine(
            number=number,
            date=date,
            value_date=value_date,
            amount=debit or credit,
            direction=Direction.DEBIT if debit else Direction.CREDIT,
            balance=balance,
            reference="" if self.reference is None else texts[self.reference].strip(),
            narration=texts[self.narration].strip(),
        )


def _header(number: int, cells: Sequence[Cell], mapping: Mapping) -> _Positions:
    found: dict[str, int] = {}
    for index, cell in enumerate(cells):
        found.setdefault(_text(cell).casefold(), index)
    wanted = mapping.columns.named()
    missing = [text for text in wanted.values() if text.casefold() not in found]
    if missing:
        names = ", ".join(shown(text) for text in missing)
        has = ", ".join(shown(_text(cell)) for cell in cells if _text(cell)) or "nothing"
        raise StatementFormatError(
            f"the header row (line {number}) has no column {names} that mapping "
            f"{mapping.name} names; it has {has}"
        )
    return _Positions({key: found[text.casefold()] for key, text in wanted.items()})


def _line(
    number: int, cells: Sequence[Cell], positions: _Positions, mapping: Mapping
) -> ParsedLine | InvalidLine:
    try:
        date = _date(positions.cell(cells, "date"), mapping, "date")
        value_cell = positions.cell(cells, "value_date")
        value_date = None if _blank(value_cell) else _date(value_cell, mapping, "value date")
        amount, direction = _amount(cells, positions, mapping)
        balance_cell = positions.cell(cells, "balance")
        balance = None if _blank(balance_cell) else _money(balance_cell, mapping, "balance")
    except FieldValueError as exc:
        return InvalidLine(number, str(exc))
    return ParsedLine(
        number=number,
        date=date,
        value_date=value_date,
        amount=amount,
        direction=direction,
        balance=balance,
        reference=_text(positions.cell(cells, "reference")),
        narration=_text(positions.cell(cells, "narration")),
    )


def _amount(
    cells: Sequence[Cell], positions: _Positions, mapping: Mapping
) -> tuple[int, Direction]:
    if mapping.columns.amount is not None:
        cell = positions.cell(cells, "amount")
        if _blank(cell):
            raise FieldValueError("amount is empty")
        signed = _money(cell, mapping, "amount")
        if signed == 0:
            raise FieldValueError("amount is zero")
        return abs(signed), Direction.CREDIT if signed > 0 else Direction.DEBIT
    debit_cell, credit_cell = positions.cell(cells, "debit"), positions.cell(cells, "credit")
    # Many exports write 0.00 in the column that does not apply: zero counts as empty.
    debit = 0 if _blank(debit_cell) else _money(debit_cell, mapping, "debit")
    credit = 0 if _blank(credit_cell) else _money(credit_cell, mapping, "credit")
    for name, value, cell in (("debit", debit, debit_cell), ("credit", credit, credit_cell)):
        if value < 0:
            raise FieldValueError(f"{name} {shown(_text(cell))} is negative")
    if debit and credit:
        raise FieldValueError("the line has both a debit and a credit")
    if not debit and not credit:
        raise FieldValueError("the line has neither a debit nor a credit")
    return (debit, Direction.DEBIT) if debit else (credit, Direction.CREDIT)


def _money(cell: Cell, mapping: Mapping, name: str) -> int:
    try:
        return kobo_from_cell(cell.strip() if isinstance(cell, str) else cell, mapping.amounts)
    except FieldValueError as exc:
        raise FieldValueError(f"{name} {exc}") from exc


def _date(cell: Cell, mapping: Mapping, name: str) -> dt.date:
    if isinstance(cell, dt.datetime):
        return cell.date()
    if isinstance(cell, dt.date):
        return cell
    text = _text(cell)
    if not text:
        raise FieldValueError(f"{name} is empty")
    try:
        return _strptime(text, mapping.date_format)
    except ValueError as exc:
        raise FieldValueError(
            f"{name} {shown(text)} is not a date written as {mapping.date_format}"
        ) from exc


@functools.lru_cache(maxsize=4096)
def _strptime(text: str, date_format: str) -> dt.date:
    # A statement repeats a few hundred dates over millions of lines; strptime is slow.
    return dt.datetime.strptime(text, date_format).date()


def _blank(cell: Cell) -> bool:
    return cell is None or (isinstance(cell, str) and not cell.strip())


def _text(cell: Cell) -> str:
    if cell is None:
        return ""
    if isinstance(cell, float) and cell.is_integer():
        # A reference typed into a spreadsheet comes back as 1234.0.
        return str(int(cell))
    return str(cell).strip()
