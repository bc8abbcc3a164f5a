"""Format detection, the one parsing entry point, and every sample in docs/statements/."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from statements.balances import balance_breaks
from statements.errors import MappingError, StatementFormatError
from statements.formats import StatementFormat, detect_format, parse_statement
from statements.lines import ParsedLine, StatedBalances
from statements.mapping import load_mapping
from tests.unit.statements.rows import SANDBOX_HEADER, xlsx_bytes

SAMPLES = Path(__file__).resolve().parents[3] / "docs" / "statements"


@pytest.mark.parametrize(
    ("head", "filename", "expected"),
    [
        (b"PK\x03\x04rest", None, StatementFormat.XLSX),
        (
            b'<?xml version="1.0"?>\n'
            b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">',
            None,
            StatementFormat.CAMT053,
        ),
        (b"\xef\xbb\xbf  <Document xmlns='camt.053.001.02'>", None, StatementFormat.CAMT053),
        (b":20:STMT\r\n:25:X", None, StatementFormat.MT940),
        (b"\r\n{1:F01BANK}{2:I940}{4:\r\n:20:X", None, StatementFormat.MT940),
        (b"-}", "statement.sta", StatementFormat.MT940),
        (b"Date,Value Date,Reference", "wallet.csv", StatementFormat.CSV),
        (b"", None, StatementFormat.CSV),
    ],
)
def test_detect_format(head: bytes, filename: str | None, expected: StatementFormat) -> None:
    """Zip magic is XLSX, XML naming camt.053 is CAMT, :20: or {1: is MT940, else CSV."""
    assert detect_format(head, filename) is expected


def test_xml_that_is_not_camt053_is_refused() -> None:
    """Another XML document is no statement of any format."""
    with pytest.raises(StatementFormatError, match=r"not a CAMT\.053"):
        detect_format(b"<?xml version='1.0'?><svg/>")


class _Unseekable(io.RawIOBase):
    """A stream that can only be read forward, like a request body."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        chunk = self._data.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


@pytest.mark.parametrize("seekable", [True, False])
def test_auto_reads_from_the_start_after_detecting(seekable: bool) -> None:
    """Detection peeks at the head; the parse still sees the whole file, seekable or not."""
    data = (SAMPLES / "wallet.mt940").read_bytes()
    stream = io.BytesIO(data) if seekable else io.BufferedReader(_Unseekable(data), 16)
    statement = parse_statement(stream)
    lines = list(statement.lines)
    assert statement.format is StatementFormat.MT940 and len(lines) == 7
    assert statement.stated() == StatedBalances(opening=100000000, closing=153672850)


def test_table_formats_need_a_mapping_and_state_no_balances() -> None:
    """CSV and XLSX without a mapping are refused; with one they state no balances."""
    with pytest.raises(MappingError, match="csv statement needs a column mapping"):
        parse_statement(io.BytesIO(b"a,b\r\n"), format="csv")
    workbook = xlsx_bytes([SANDBOX_HEADER, ["2026-11-26", "", "R", "N", "1.00", "", "5.00"]])
    statement = parse_statement(workbook, mapping=load_mapping("sandbox"))
    (line,) = statement.lines
    assert statement.format is StatementFormat.XLSX and isinstance(line, ParsedLine)
    assert statement.stated() == StatedBalances()


@pytest.mark.parametrize("sample", sorted(SAMPLES.iterdir()), ids=lambda path: path.name)
def test_every_documented_sample_parses_without_invalid_lines(sample: Path) -> None:
    """Each sample in docs/statements/ reads with its mapping (a CSV's mapping is named like
    the file): lines only, no invalid one, and a balance chain without breaks."""
    mapping = load_mapping(sample.stem) if sample.suffix == ".csv" else None
    with sample.open("rb") as stream:
        statement = parse_statement(stream, mapping=mapping, filename=sample.name)
        lines = list(statement.lines)
    assert len(lines) >= 4
    assert all(isinstance(line, ParsedLine) for line in lines)
    parsed = [line for line in lines if isinstance(line, ParsedLine)]
    assert list(balance_breaks(parsed, statement.stated())) == []
