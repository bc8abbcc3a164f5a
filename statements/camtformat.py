"""CAMT.053 (ISO 20022 bank-to-customer statement) read as a stream of XML events through
defusedxml, which refuses DTDs, entity declarations and external references, so an entity
bomb or an external entity stops the parse at once. Any camt.053.001.xx version: elements are
matched by their local names."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from statements.errors import FieldValueError, StatementFormatError
from statements.lines import Direction, InvalidLine, ParsedLine, StatedBalances
from statements.money import kobo_from_xml, shown

_CHUNK = 64 * 1024
# No element of a statement holds this much text; more is refused, not accumulated.
_MAX_TEXT = 64 * 1024
_OPENING = ("OPBD", "PRCD")  # opening booked; else the previous day's closing
_CLOSING = ("CLBD", "CLAV")  # closing booked; else closing available


@dataclass(slots=True)
class _Statement:
    """The balances of one `Stmt` element and the running balance through its entries."""

    balances: dict[str, int] = field(default_factory=dict)
    running: int | None = None
    started: bool = False

    def first(self, codes: tuple[str, ...]) -> int | None:
        return next((self.balances[code] for code in codes if code in self.balances), None)


class CamtStatement:
    """One CAMT.053 file: `lines()` yields its booked entries (`Ntry` with status BOOK) in
    order, each numbered by the line its `<Ntry>` starts on; `stated` holds the first
    statement's opening and the last one's closing balance once `lines()` is exhausted."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.stated = StatedBalances()

    def lines(self) -> Iterator[ParsedLine | InvalidLine]:
        """The entries, read chunk by chunk: memory holds one chunk's entries at a time."""
        target = _Target(self)
        parser = DefusedXMLParser(
            target=target, forbid_dtd=True, forbid_entities=True, forbid_external=True
        )
        target.line_of = lambda: int(parser.parser.CurrentLineNumber)
        try:
            while chunk := self._stream.read(_CHUNK):
                parser.feed(chunk)
                yield from target.drain()
            parser.close()
        except DefusedXmlException as exc:
            raise StatementFormatError(
                "the XML declares a DTD, an entity or an external reference, which a "
                f"statement never needs: refused ({type(exc).__name__})"
            ) from exc
        except ET.ParseError as exc:
            raise StatementFormatError(f"not well-formed XML: {exc}") from exc
        yield from target.drain()


class _Target:
    """The parser's target: keeps the path of open elements and the text of the current one,
    and turns each finished `Bal` and `Ntry` into balances and lines."""

    def __init__(self, statement: CamtStatement) -> None:
        self._statement = statement
        self.line_of: Callable[[], int] = lambda: 0
        self.seen_root = False
        self._path: list[str] = []
        self._text: list[str] = []
        self._size = 0
        self._stmt = _Statement()
        self._entry: dict[str, str] | None = None
        self._entry_line = 0
        self._balance: dict[str, str] | None = None
        self._out: list[ParsedLine | InvalidLine] = []

    def drain(self) -> list[ParsedLine | InvalidLine]:
        out, self._out = self._out, []
        return out

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        del attrib
        name = tag.rsplit("}", 1)[-1]
        if not self.seen_root:
            self.seen_root = True
            if name != "Document" or "camt.053" not in tag:
                raise StatementFormatError(f"not a CAMT.053 statement: the root element is {tag}")
        self._path.append(name)
        self._text, self._size = [], 0
        if name == "Stmt":
            self._stmt = _Statement()
        elif name == "Ntry" and self._parent() == "Stmt":
            self._entry = {}
            self._entry_line = self._line()
        elif name == "Bal" and self._parent() == "Stmt":
            self._balance = {}

    def data(self, text: str) -> None:
        self._size += len(text)
        if self._size > _MAX_TEXT:
            raise StatementFormatError(
                f"line {self._line()}: the element {self._path[-1]} holds more than "
                f"{_MAX_TEXT} characters"
            )
        self._text.append(text)

    def end(self, tag: str) -> None:
        del tag
        text = "".join(self._text).strip()
        self._text, self._size = [], 0
        path = tuple(self._path)
        self._path.pop()
        name = path[-1]
        if self._entry is not None and "Ntry" in path:
            if name == "Ntry":
                self._finish_entry(self._entry)
                self._entry = None
            elif text:
                key = "/".join(path[path.index("Ntry") + 1 :])
                self._entry.setdefault(key, text)
                if name == "Ustrd":
                    self._entry["Ustrd"] = (self._entry.get("Ustrd", "") + " " + text).strip()
                elif name == "EndToEndId":
                    self._entry.setdefault("EndToEndId", text)
        elif self._balance is not None and "Bal" in path:
            if name == "Bal":
                self._finish_balance(self._balance)
                self._balance = None
            elif text:
                self._balance["/".join(path[path.index("Bal") + 1 :])] = text
        elif name == "Stmt":
            self._finish_statement()

    def close(self) -> None:
        """The parser's end of document (nothing is left to build)."""

    def _parent(self) -> str | None:
        return self._path[-2] if len(self._path) > 1 else None

    def _line(self) -> int:
        return self.line_of()

    def _finish_balance(self, values: dict[str, str]) -> None:
        code = values.get("Tp/CdOrPrtry/Cd", "")
        line = self._line()
        try:
            amount = kobo_from_xml(values.get("Amt", ""))
        except FieldValueError as exc:
            raise StatementFormatError(f"line {line}: the balance {code} amount {exc}") from exc
        sign = _sign(values.get("CdtDbtInd", ""))
        if sign is None:
            raise StatementFormatError(f"line {line}: the balance {code} has no CRDT/DBIT mark")
        self._stmt.balances.setdefault(code, amount if sign is Direction.CREDIT else -amount)

    def _finish_statement(self) -> None:
        opening, closing = self._stmt.first(_OPENING), self._stmt.first(_CLOSING)
        stated = self._statement.stated
        first = stated.opening if stated.opening is not None else opening
        last = closing if closing is not None else stated.closing
        self._statement.stated = StatedBalances(first, last)

    def _finish_entry(self, values: dict[str, str]) -> None:
        status = values.get("Sts/Cd", values.get("Sts", "BOOK"))
        if status != "BOOK":
            return  # pending and information-only entries are no movement yet
        if not self._stmt.started:
            self._stmt.started = True
            self._stmt.running = self._stmt.first(_OPENING)
        number = self._entry_line
        try:
            amount = _entry_amount(values.get("Amt", ""))
            direction = _sign(values.get("CdtDbtInd", ""))
            if direction is None:
                mark = shown(values.get("CdtDbtInd", ""))
                raise FieldValueError(f"CdtDbtInd {mark} is not CRDT or DBIT")
            booked = _date(values, "BookgDt")
            dated = "ValDt/Dt" in values or "ValDt/DtTm" in values
            valued = _date(values, "ValDt") if dated else None
        except FieldValueError as exc:
            self._out.append(InvalidLine(number, str(exc)))
            return
        signed = amount if direction is Direction.CREDIT else -amount
        running = self._stmt.running
        self._stmt.running = None if running is None else running + signed
        self._out.append(
            ParsedLine(
                number=number,
                date=booked,
                value_date=valued,
                amount=amount,
                direction=direction,
                balance=self._stmt.running,
                reference=_reference(values),
                narration=values.get("AddtlNtryInf") or values.get("Ustrd", ""),
            )
        )


def _sign(indicator: str) -> Direction | None:
    return {"CRDT": Direction.CREDIT, "DBIT": Direction.DEBIT}.get(indicator)


def _entry_amount(text: str) -> int:
    try:
        return kobo_from_xml(text)
    except FieldValueError as exc:
        raise FieldValueError(f"Amt {exc}") from exc


def _date(values: dict[str, str], element: str) -> dt.date:
    text = values.get(f"{element}/Dt") or values.get(f"{element}/DtTm", "")[:10]
    if not text:
        raise FieldValueError(f"{element} has no date")
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise FieldValueError(f"{element} {shown(text)} is not a date (YYYY-MM-DD)") from exc


def _reference(values: dict[str, str]) -> str:
    for key in ("NtryRef", "AcctSvcrRef", "EndToEndId"):
        if values.get(key):
            return values[key]
    return ""
