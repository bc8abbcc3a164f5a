"""Independent readers of the sandbox's statement exports, for tests only.

Each reads one agreed format with different means than the writer (csv module, openpyxl,
a regular expression, ElementTree) into the same plain shape, so tests can compare the four
and check that balances chain.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import date, datetime

from openpyxl import load_workbook

HEADER = ["Date", "Value Date", "Reference", "Narration", "Debit", "Credit", "Balance"]
CAMT = {"c": "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"}
_NAIRA = re.compile(r"(-?)([0-9]{1,3}(?:,[0-9]{3})*)\.([0-9]{2})")


@dataclass(frozen=True)
class Line:
    """One statement line: signed kobo (credit positive), and the balance after it if shown."""

    day: date
    reference: str
    narration: str
    signed: int
    balance: int | None


@dataclass(frozen=True)
class Read:
    """A statement read back: opening and closing balances (None where the format has none)."""

    lines: list[Line]
    opening: int | None = None
    closing: int | None = None


def naira_to_kobo(text: str) -> int:
    """`"-1,250.50"` → -125050, refusing anything else."""
    match = _NAIRA.fullmatch(text)
    assert match is not None, text
    sign, whole, fraction = match.groups()
    kobo = int(whole.replace(",", "")) * 100 + int(fraction)
    return -kobo if sign else kobo


def _from_rows(rows: list[list[str]]) -> Read:
    assert rows[0] == HEADER
    lines = []
    for day, value_day, reference, narration, debit, credit, balance in rows[1:]:
        assert day == value_day
        assert (debit == "") != (credit == "")
        signed = naira_to_kobo(credit) if credit else -naira_to_kobo(debit)
        assert signed != 0
        lines.append(
            Line(date.fromisoformat(day), reference, narration, signed, naira_to_kobo(balance))
        )
    return Read(lines)


def read_csv(body: bytes) -> Read:
    """The CSV export, through the csv module."""
    return _from_rows(list(csv.reader(io.StringIO(body.decode("utf-8"), newline=""))))


def read_xlsx(body: bytes) -> Read:
    """The XLSX export, through openpyxl; every cell must be text."""
    workbook = load_workbook(io.BytesIO(body), read_only=True)
    assert workbook.sheetnames == ["Statement"]
    rows = []
    for row in workbook["Statement"].iter_rows():
        cells = []
        for cell in row:
            assert cell.data_type == "s" or cell.value is None, (cell.value, cell.data_type)
            cells.append("" if cell.value is None else str(cell.value))
        rows.append(cells)
    return _from_rows(rows)


_MT_BALANCE = re.compile(r"([CD])([0-9]{6})NGN([0-9]+),([0-9]{2})")
_MT_LINE = re.compile(r"([0-9]{6})([0-9]{4})([CD])([0-9]+),([0-9]{2})NTRF([^/]{1,16})//(\S+)")


def _mt_amount(mark: str, whole: str, fraction: str) -> int:
    kobo = int(whole) * 100 + int(fraction)
    return -kobo if mark == "D" else kobo


def read_mt940(body: bytes) -> Read:
    """The MT940 export, through regular expressions; balances chain from :60F:."""
    text = body.decode("utf-8")
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    fields = text.split("\r\n")[:-1]
    assert fields[1].startswith(":25:") and fields[2] == ":28C:1/1"
    assert fields[0].startswith(":20:") and len(fields[0]) <= 4 + 16
    opening_match = _MT_BALANCE.fullmatch(fields[3].removeprefix(":60F:"))
    closing_match = _MT_BALANCE.fullmatch(fields[-1].removeprefix(":62F:"))
    assert fields[3].startswith(":60F:") and fields[-1].startswith(":62F:")
    assert opening_match is not None and closing_match is not None
    opening = _mt_amount(opening_match[1], opening_match[3], opening_match[4])
    closing = _mt_amount(closing_match[1], closing_match[3], closing_match[4])
    lines = []
    pairs = fields[4:-1]
    assert len(pairs) % 2 == 0
    for statement_line, info in zip(pairs[::2], pairs[1::2], strict=True):
        assert statement_line.startswith(":61:") and info.startswith(":86:")
        match = _MT_LINE.fullmatch(statement_line.removeprefix(":61:"))
        assert match is not None, statement_line
        value_day = datetime.strptime(match[1], "%y%m%d").date()
        assert match[2] == value_day.strftime("%m%d")
        assert match[7].startswith(match[6]) and len(match[6]) == min(16, len(match[7]))
        narration = info.removeprefix(":86:")
        assert match[7] in narration
        signed = _mt_amount(match[3], match[4], match[5])
        lines.append(Line(value_day, match[7], narration, signed, None))
    return Read(lines, opening, closing)


def _camt_balance(element: ET.Element) -> tuple[str, int]:
    code = element.findtext("c:Tp/c:CdOrPrtry/c:Cd", namespaces=CAMT)
    amount = element.find("c:Amt", CAMT)
    assert code is not None and amount is not None and amount.get("Ccy") == "NGN"
    kobo = round_decimal(amount.text or "")
    sign = element.findtext("c:CdtDbtInd", namespaces=CAMT)
    assert sign in ("CRDT", "DBIT")
    return code, -kobo if sign == "DBIT" else kobo


def round_decimal(text: str) -> int:
    """`"12500.00"` → 1250000 (exactly two decimals, no sign)."""
    match = re.fullmatch(r"([0-9]+)\.([0-9]{2})", text)
    assert match is not None, text
    return int(match[1]) * 100 + int(match[2])


def read_camt053(body: bytes) -> Read:
    """The CAMT.053 export, through ElementTree."""
    root = ET.fromstring(body)
    assert root.tag == "{urn:iso:std:iso:20022:tech:xsd:camt.053.001.02}Document"
    (statement,) = root.findall("c:BkToCstmrStmt/c:Stmt", CAMT)
    balances = dict(_camt_balance(b) for b in statement.findall("c:Bal", CAMT))
    lines = []
    for entry in statement.findall("c:Ntry", CAMT):
        amount = entry.find("c:Amt", CAMT)
        assert amount is not None and amount.get("Ccy") == "NGN"
        kobo = round_decimal(amount.text or "")
        sign = entry.findtext("c:CdtDbtInd", namespaces=CAMT)
        assert sign in ("CRDT", "DBIT")
        assert entry.findtext("c:Sts", namespaces=CAMT) == "BOOK"
        booked = entry.findtext("c:BookgDt/c:Dt", namespaces=CAMT)
        assert booked is not None and booked == entry.findtext("c:ValDt/c:Dt", namespaces=CAMT)
        lines.append(
            Line(
                date.fromisoformat(booked),
                entry.findtext("c:NtryRef", namespaces=CAMT) or "",
                entry.findtext("c:AddtlNtryInf", namespaces=CAMT) or "",
                kobo if sign == "CRDT" else -kobo,
                None,
            )
        )
    return Read(lines, balances["OPBD"], balances["CLBD"])


def account_of_camt053(body: bytes) -> str | None:
    """The statement's account identifier (`Acct/Id/Othr/Id`)."""
    root = ET.fromstring(body)
    return root.findtext("c:BkToCstmrStmt/c:Stmt/c:Acct/c:Id/c:Othr/c:Id", namespaces=CAMT)


def gaps(opening: int, lines: list[Line]) -> list[int]:
    """Indexes of lines whose shown balance is not the previous balance plus the line."""
    found = []
    balance = opening
    for index, line in enumerate(lines):
        balance += line.signed
        if line.balance is not None and line.balance != balance:
            found.append(index)
            balance = line.balance
    return found
