"""Writing a statement as the provider's dashboard exports it: CSV, XLSX, MT940, CAMT.053.

The layouts are the ones agreed in sandbox/README.md ("Statement exports"); payrecon's
reader is written separately from the same description, so nothing here is shared with it.
Pure: a Statement in, bytes out.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from datetime import date

from openpyxl import Workbook

from sandbox.journal import CURRENCY, Direction, Movement, Statement

FORMATS: dict[str, str] = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "mt940": "text/plain; charset=utf-8",
    "camt053": "application/xml",
}
EXTENSIONS = {"csv": "csv", "xlsx": "xlsx", "mt940": "sta", "camt053": "xml"}
HEADER = ("Date", "Value Date", "Reference", "Narration", "Debit", "Credit", "Balance")
CAMT_NAMESPACE = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"
# Control characters cannot stand in an MT940 field (a line break would start a new one) nor
# in XML 1.0; a merchant reference may carry them, so they become spaces.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def naira(kobo: int) -> str:
    """Kobo as naira with two decimals and comma thousands separators: -125050 → -1,250.50."""
    sign = "-" if kobo < 0 else ""
    whole, fraction = divmod(abs(kobo), 100)
    return f"{sign}{whole:,}.{fraction:02d}"


def _plain(kobo: int, separator: str) -> str:
    whole, fraction = divmod(abs(kobo), 100)
    return f"{whole}{separator}{fraction:02d}"


def _clean(text: str) -> str:
    return _CONTROL.sub(" ", text)


def rows(statement: Statement) -> list[list[str]]:
    """The CSV/XLSX rows, header first, every cell a string."""
    table = [list(HEADER)]
    for line in statement.lines:
        day = line.day.isoformat()
        debit = naira(line.amount) if line.direction is Direction.DEBIT else ""
        credit = naira(line.amount) if line.direction is Direction.CREDIT else ""
        table.append([day, day, line.reference, line.narration, debit, credit, naira(line.balance)])
    return table


def to_csv(statement: Statement) -> bytes:
    """CSV: the header row, then one row per line; no footer."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows(statement))
    return buffer.getvalue().encode()


def to_xlsx(statement: Statement) -> bytes:
    """XLSX: one sheet `Statement` with the CSV's cells, each a text cell."""
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Statement"
    for row_number, row in enumerate(rows(statement), start=1):
        for column, value in enumerate(row, start=1):
            cell = sheet.cell(row=row_number, column=column, value=value)
            cell.data_type = "s"  # text even if it looks like a number or a formula
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _mt940_balance(tag: str, kobo: int, day: date) -> str:
    mark = "D" if kobo < 0 else "C"
    return f":{tag}:{mark}{day:%y%m%d}{CURRENCY}{_plain(kobo, ',')}"


def _mt940_line(line: Movement) -> list[str]:
    mark = "D" if line.direction is Direction.DEBIT else "C"
    reference = line.reference
    narration = _clean(line.narration)
    if reference not in narration:
        # The :86: field always carries the full reference (a reader may take it from there
        # rather than from :61:'s `//` part).
        narration = f"{narration} / {reference}"
    return [
        f":61:{line.day:%y%m%d}{line.day:%m%d}{mark}{_plain(line.amount, ',')}NTRF"
        f"{reference[:16]}//{reference}",
        f":86:{narration}",
    ]


def to_mt940(statement: Statement) -> bytes:
    """MT940: one statement; opening and closing balances, a :61:/:86: pair per line."""
    out = [
        f":20:STMT{statement.first_day:%y%m%d}{statement.last_day:%y%m%d}",
        f":25:{statement.account}",
        ":28C:1/1",
        _mt940_balance("60F", statement.opening_balance, statement.first_day),
    ]
    for line in statement.lines:
        out.extend(_mt940_line(line))
    out.append(_mt940_balance("62F", statement.closing_balance, statement.last_day))
    return ("\r\n".join(out) + "\r\n").encode()


def _sub(parent: ET.Element, path: str, text: str | None = None) -> ET.Element:
    element = parent
    for name in path.split("/"):
        element = ET.SubElement(element, f"{{{CAMT_NAMESPACE}}}{name}")
    if text is not None:
        element.text = text
    return element


def _camt_amount(parent: ET.Element, kobo: int) -> None:
    _sub(parent, "Amt", _plain(kobo, ".")).set("Ccy", CURRENCY)


def _camt_balance(statement_element: ET.Element, code: str, kobo: int, day: date) -> None:
    balance = _sub(statement_element, "Bal")
    _sub(balance, "Tp/CdOrPrtry/Cd", code)
    _camt_amount(balance, kobo)
    _sub(balance, "CdtDbtInd", "DBIT" if kobo < 0 else "CRDT")
    _sub(balance, "Dt/Dt", day.isoformat())


def to_camt053(statement: Statement, *, created: str) -> bytes:
    """CAMT.053.001.02: one Stmt with OPBD and CLBD balances and one Ntry per line."""
    ET.register_namespace("", CAMT_NAMESPACE)
    document = ET.Element(f"{{{CAMT_NAMESPACE}}}Document")
    root = _sub(document, "BkToCstmrStmt")
    identifier = (
        f"STMT-{statement.account}-{statement.first_day:%Y%m%d}-{statement.last_day:%Y%m%d}"
    )
    header = _sub(root, "GrpHdr")
    _sub(header, "MsgId", identifier)
    _sub(header, "CreDtTm", created)
    stmt = _sub(root, "Stmt")
    _sub(stmt, "Id", identifier)
    _sub(stmt, "CreDtTm", created)
    account = _sub(stmt, "Acct")
    _sub(account, "Id/Othr/Id", statement.account)
    _sub(account, "Ccy", CURRENCY)
    _camt_balance(stmt, "OPBD", statement.opening_balance, statement.first_day)
    _camt_balance(stmt, "CLBD", statement.closing_balance, statement.last_day)
    for line in statement.lines:
        entry = _sub(stmt, "Ntry")
        _sub(entry, "NtryRef", line.reference)
        _camt_amount(entry, line.amount)
        _sub(entry, "CdtDbtInd", "DBIT" if line.direction is Direction.DEBIT else "CRDT")
        _sub(entry, "Sts", "BOOK")
        _sub(entry, "BookgDt/Dt", line.day.isoformat())
        _sub(entry, "ValDt/Dt", line.day.isoformat())
        _sub(entry, "BkTxCd/Prtry/Cd", "NTRF")
        _sub(entry, "AddtlNtryInf", _clean(line.narration))
    written: bytes = ET.tostring(document, encoding="utf-8", xml_declaration=True)
    return written


def render(statement: Statement, fmt: str, *, created: str) -> bytes:
    """The statement in one of FORMATS (`created`: the export's ISO-8601 creation time)."""
    if fmt == "csv":
        return to_csv(statement)
    if fmt == "xlsx":
        return to_xlsx(statement)
    if fmt == "mt940":
        return to_mt940(statement)
    assert fmt == "camt053"
    return to_camt053(statement, created=created)
