"""CAMT.053 statements: entries with their line numbers, stated balances, any version's
namespace, and XML that declares entities refused at once."""

from __future__ import annotations

import datetime as dt
import io
import tracemalloc

import pytest

from statements.camtformat import CamtStatement
from statements.errors import StatementFormatError
from statements.lines import Direction, InvalidLine, ParsedLine, StatedBalances


def entry(
    amount: str,
    mark: str,
    *,
    ref: str = "TRF_A",
    status: str = "<Sts>BOOK</Sts>",
    booked: str = "<BookgDt><Dt>2026-11-26</Dt></BookgDt>",
) -> str:
    """One <Ntry> on one line."""
    return (
        f'<Ntry><NtryRef>{ref}</NtryRef><Amt Ccy="NGN">{amount}</Amt>'
        f"<CdtDbtInd>{mark}</CdtDbtInd>{status}{booked}"
        f"<ValDt><Dt>2026-11-26</Dt></ValDt><AddtlNtryInf>Narration {ref}</AddtlNtryInf></Ntry>"
    )


def balance(code: str, amount: str, mark: str = "CRDT") -> str:
    """One <Bal> on one line."""
    return (
        f"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp>"
        f'<Amt Ccy="NGN">{amount}</Amt><CdtDbtInd>{mark}</CdtDbtInd>'
        f"<Dt><Dt>2026-11-26</Dt></Dt></Bal>"
    )


def document(*body: str, version: str = "02") -> io.BytesIO:
    """A camt.053 document of the given version with these lines inside its Stmt."""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.{version}">',
        "<BkToCstmrStmt><GrpHdr><MsgId>M</MsgId></GrpHdr>",
        "<Stmt><Acct><Id><Othr><Id>SANDBOX-WALLET</Id></Othr></Id></Acct>",
        *body,
        "</Stmt></BkToCstmrStmt></Document>",
    ]
    return io.BytesIO("\n".join(lines).encode())


@pytest.mark.parametrize("version", ["02", "04", "08"])
def test_entries_balances_and_line_numbers(version: str) -> None:
    """Each booked Ntry is a line numbered by its line; balances run from OPBD; OPBD and
    CLBD are the stated balances, whatever the version's namespace."""
    statement = CamtStatement(
        document(
            balance("OPBD", "1000000.00"),
            balance("CLBD", "987489.25"),
            entry("12500.00", "DBIT"),
            entry("10.75", "DBIT"),
            version=version,
        )
    )
    lines = list(statement.lines())
    assert lines[0] == ParsedLine(
        7,
        dt.date(2026, 11, 26),
        dt.date(2026, 11, 26),
        1250000,
        Direction.DEBIT,
        98750000,
        "TRF_A",
        "Narration TRF_A",
    )
    assert isinstance(lines[1], ParsedLine) and (lines[1].number, lines[1].balance) == (8, 98748925)
    assert statement.stated == StatedBalances(opening=100000000, closing=98748925)


def test_fallback_balances_pending_entries_and_version_8_status() -> None:
    """PRCD and CLAV stand in for OPBD and CLBD; a pending entry is no line; <Sts><Cd>BOOK
    (version 8) is booked."""
    statement = CamtStatement(
        document(
            balance("PRCD", "100.00", "DBIT"),
            balance("CLAV", "50.00", "DBIT"),
            entry("5.00", "CRDT", status="<Sts>PDNG</Sts>"),
            entry("50.00", "CRDT", status="<Sts><Cd>BOOK</Cd></Sts>"),
        )
    )
    (line,) = statement.lines()
    assert isinstance(line, ParsedLine) and (line.number, line.balance) == (8, -5000)
    assert statement.stated == StatedBalances(opening=-10000, closing=-5000)


@pytest.mark.parametrize(
    ("ntry", "reason"),
    [
        (entry("12.345", "DBIT"), 'Amt "12.345" has more than two decimals'),
        (entry("1,000.00", "DBIT"), 'Amt "1,000.00" is not an amount'),
        (entry("1.00", "DEBIT"), 'CdtDbtInd "DEBIT" is not CRDT or DBIT'),
        (entry("1.00", "DBIT", booked=""), "BookgDt has no date"),
        (entry("1.00", "DBIT", booked="<BookgDt><Dt>2026-13-01</Dt></BookgDt>"), "is not a date"),
    ],
)
def test_an_unreadable_entry_is_an_invalid_line_with_its_number(ntry: str, reason: str) -> None:
    """A bad amount, mark or date: an invalid line numbered by the line its Ntry starts on."""
    lines = list(CamtStatement(document(entry("1.00", "CRDT"), ntry)).lines())
    assert isinstance(lines[0], ParsedLine)
    assert isinstance(lines[1], InvalidLine) and lines[1].number == 6
    assert reason in lines[1].reason


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt>
<Ntry><AddtlNtryInf>&lol9;</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>
"""

EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE Document [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt>
<Ntry><AddtlNtryInf>&secret;</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>
"""


@pytest.mark.timeout(10)
@pytest.mark.parametrize("xml", [BILLION_LAUGHS, EXTERNAL_ENTITY], ids=["bomb", "external"])
def test_entity_declarations_are_refused_in_bounded_time_and_memory(xml: bytes) -> None:
    """An entity bomb or an external entity is refused before any expansion: the test ends
    (timeout 10 s) and the parse allocates under 2 MB (the bomb would need gigabytes)."""
    tracemalloc.start()
    try:
        with pytest.raises(StatementFormatError, match="declares a DTD"):
            list(CamtStatement(io.BytesIO(xml)).lines())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (
            b'<?xml version="1.0"?>'
            b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03"/>',
            "root element is",
        ),
        (b"<Document xmlns='urn:camt.053'><Stmt>", "not well-formed XML"),
        (b"", "not well-formed XML: no element found"),
        (document(balance("OPBD", "1.001")).getvalue(), "the balance OPBD amount"),
        (document(balance("OPBD", "1.00", "X")).getvalue(), "no CRDT/DBIT mark"),
        (
            document("<Ntry><AddtlNtryInf>" + "x" * 70000 + "</AddtlNtryInf></Ntry>").getvalue(),
            "more than",
        ),
    ],
)
def test_a_file_that_is_no_camt053_statement_is_refused(data: bytes, why: str) -> None:
    """Another ISO 20022 message, broken XML, an empty file, unreadable balances, a giant
    text: nothing is read."""
    with pytest.raises(StatementFormatError, match=why):
        list(CamtStatement(io.BytesIO(data)).lines())


def test_many_entries_are_read_in_flat_memory() -> None:
    """20,000 entries (about 5 MB of XML) are read with under 2 MB allocated at the peak
    beyond the file itself: entries are not kept once yielded."""
    data = document(*(entry("1.00", "CRDT") for _ in range(20000))).getvalue()
    tracemalloc.start()
    try:
        count = sum(1 for _ in CamtStatement(io.BytesIO(data)).lines())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20000
    assert peak < 2 * 1024 * 1024
