"""Column mappings: the TOML keys PRODUCT.md names, refused keys named, built-ins by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from statements.errors import MappingError
from statements.mapping import builtin_mappings, load_mapping, parse_mapping
from statements.money import Amounts

PRODUCT_EXAMPLE = b"""
skip_rows = 3              # rows before the header row (a bank's preamble)
date_format = "%d/%m/%Y"   # strptime directives
amounts = "naira"          # "naira" (decimals, thousands separators) or "kobo"

[columns]
date = "Trans. Date"
value_date = "Value Date"  # optional
reference = "Reference"
narration = "Narration"
debit = "Debit"            # or one signed column: amount = "Amount" (negative = debit)
credit = "Credit"
balance = "Balance"
"""


def test_the_contracts_example_mapping_loads() -> None:
    """PRODUCT.md's example mapping is read key for key."""
    mapping = parse_mapping(PRODUCT_EXAMPLE, name="example")
    assert (mapping.skip_rows, mapping.date_format, mapping.amounts) == (
        3,
        "%d/%m/%Y",
        Amounts.NAIRA,
    )
    assert mapping.columns.named() == {
        "date": "Trans. Date",
        "value_date": "Value Date",
        "reference": "Reference",
        "narration": "Narration",
        "debit": "Debit",
        "credit": "Credit",
        "balance": "Balance",
    }
    assert (mapping.encoding, mapping.delimiter, mapping.stop_at) == ("utf-8-sig", ",", ())


def test_a_signed_amount_column_in_kobo() -> None:
    """One signed `amount` column replaces debit and credit; amounts may be kobo."""
    mapping = parse_mapping(
        b'date_format = "%Y-%m-%d"\namounts = "kobo"\n'
        b'[columns]\ndate = "D"\nnarration = "N"\namount = "A"\n',
        name="signed",
    )
    assert mapping.columns.amount == "A" and mapping.columns.debit is None
    assert mapping.amounts is Amounts.KOBO


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            b'date_format = "%d"\nskip_row = 2\n[columns]\ndate="D"\nnarration="N"\namount="A"',
            "skip_row",
        ),
        (
            b'date_format = "%d"\n[columns]\ndate="D"\nnarration="N"\namount="A"\nmemo="M"',
            "columns.memo",
        ),
        (b'date_format = "%d"\n[columns]\nnarration="N"\namount="A"', "columns.date"),
        (b'date_format = "%d"\n[columns]\ndate="D"\namount="A"', "columns.narration"),
        (b'[columns]\ndate="D"\nnarration="N"\namount="A"', "date_format"),
        (b'date_format = "%d"\n[columns]\ndate="D"\nnarration="N"\ndebit="X"', "columns.credit"),
        (b'date_format = "%d"\n[columns]\ndate="D"\nnarration="N"\ncredit="X"', "columns.debit"),
        (b'date_format = "%d"\n[columns]\ndate="D"\nnarration="N"', "columns.amount"),
        (
            b'date_format = "%d"\n[columns]\ndate="D"\nnarration="N"\namount="A"\ndebit="X"',
            "columns.amount",
        ),
        (
            b'date_format = "%d"\namounts = "dollars"\n'
            b'[columns]\ndate="D"\nnarration="N"\namount="A"',
            "amounts",
        ),
        (
            b'date_format = "%d"\nskip_rows = -1\n[columns]\ndate="D"\nnarration="N"\namount="A"',
            "skip_rows",
        ),
        (b'date_format = "dd/mm"\n[columns]\ndate="D"\nnarration="N"\namount="A"', "date_format"),
        (
            b'date_format = "%d"\nencoding = "klingon"\n'
            b'[columns]\ndate="D"\nnarration="N"\namount="A"',
            "encoding",
        ),
        (
            b'date_format = "%d"\ndelimiter = ";;"\n[columns]\ndate="D"\nnarration="N"\namount="A"',
            "delimiter",
        ),
        (
            b'date_format = "%d"\nstop_at = "Total"\n'
            b'[columns]\ndate="D"\nnarration="N"\namount="A"',
            "stop_at",
        ),
        (b'date_format = "%d"\n[columns]\ndate=""\nnarration="N"\namount="A"', "columns.date"),
        (b'date_format = "%d"\ncolumns = 1', "columns"),
        (b"date_format = [", "not a TOML file"),
    ],
)
def test_a_bad_mapping_is_refused_naming_the_key(text: bytes, key: str) -> None:
    """Unknown keys, missing columns, wrong values and bad TOML are a MappingError naming it."""
    with pytest.raises(MappingError, match=key.replace(".", r"\.")):
        parse_mapping(text, name="bad")


def test_builtin_mappings_load_by_name_and_files_by_path(tmp_path: Path) -> None:
    """The shipped mappings load by name; a .toml path loads the file; unknown names list the
    built-ins."""
    assert builtin_mappings() == ["ng-debit-credit", "ng-withdrawals-lodgements", "sandbox"]
    for name in builtin_mappings():
        assert load_mapping(name).name == name
    assert load_mapping("sandbox").columns.debit == "Debit"
    path = tmp_path / "mine.toml"
    path.write_bytes(PRODUCT_EXAMPLE)
    assert load_mapping(str(path)).skip_rows == 3
    with pytest.raises(MappingError, match="no built-in mapping 'nope'; there are: ng-debit"):
        load_mapping("nope")
    with pytest.raises(MappingError, match="cannot read the mapping file"):
        load_mapping(str(tmp_path / "absent.toml"))
