"""A column mapping: how a bank's CSV or XLSX export lays out its lines, loaded from a small
TOML file or one built into the package (docs/rules.md "Statements and period tie-out",
Formats; docs/statements.md lists every key)."""

from __future__ import annotations

import codecs
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from statements.errors import MappingError
from statements.money import Amounts

_TOP_KEYS = frozenset(
    {
        "skip_rows",
        "date_format",
        "amounts",
        "columns",
        "stop_at",
        "skip_rows_with",
        "encoding",
        "delimiter",
        "sheet",
    }
)
_COLUMN_KEYS = frozenset(
    {"date", "value_date", "reference", "narration", "debit", "credit", "amount", "balance"}
)
_COLUMN_ORDER = (
    "date",
    "value_date",
    "reference",
    "narration",
    "debit",
    "credit",
    "amount",
    "balance",
)
# A mapping is a few lines; anything larger is not one.
_MAX_MAPPING_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Columns:
    """The header texts of the columns the parsers read (the `[columns]` table)."""

    date: str
    narration: str
    reference: str | None = None
    value_date: str | None = None
    debit: str | None = None
    credit: str | None = None
    amount: str | None = None
    balance: str | None = None

    def named(self) -> dict[str, str]:
        """Mapping key → header text, for the columns this mapping uses."""
        return {key: text for key in _COLUMN_ORDER if (text := getattr(self, key)) is not None}


@dataclass(frozen=True, slots=True)
class Mapping:
    """A whole mapping: where the header row is, how dates and amounts are written, which
    columns hold what, and which rows are not lines."""

    name: str
    columns: Columns
    date_format: str
    amounts: Amounts = Amounts.NAIRA
    skip_rows: int = 0
    stop_at: tuple[str, ...] = ()
    skip_rows_with: tuple[str, ...] = ()
    encoding: str = "utf-8-sig"
    delimiter: str = ","
    sheet: str | None = None


def builtin_mappings() -> list[str]:
    """The names of the mappings shipped in the package, sorted."""
    folder = resources.files("statements") / "mappings"
    names = (item.name for item in folder.iterdir())
    return sorted(name.removesuffix(".toml") for name in names if name.endswith(".toml"))


def load_mapping(name_or_path: str) -> Mapping:
    """A built-in mapping by name (`sandbox`), or a TOML file by path (anything ending in
    `.toml` or naming a folder); MappingError when there is none or it is malformed."""
    if name_or_path.endswith(".toml") or "/" in name_or_path or "\\" in name_or_path:
        path = Path(name_or_path)
        try:
            with path.open("rb") as file:
                data = file.read(_MAX_MAPPING_BYTES + 1)
        except OSError as exc:
            raise MappingError(f"cannot read the mapping file {path}: {exc.strerror}") from exc
        return parse_mapping(data, name=path.stem)
    if name_or_path not in builtin_mappings():
        known = ", ".join(builtin_mappings())
        raise MappingError(f"no built-in mapping {name_or_path!r}; there are: {known}")
    resource = resources.files("statements") / "mappings" / f"{name_or_path}.toml"
    return parse_mapping(resource.read_bytes(), name=name_or_path)


def parse_mapping(data: bytes, *, name: str) -> Mapping:
    """A mapping from the bytes of its TOML file; MappingError naming the key at fault."""
    if len(data) > _MAX_MAPPING_BYTES:
        raise MappingError(f"mapping {name}: larger than {_MAX_MAPPING_BYTES} bytes")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MappingError(f"mapping {name}: not a TOML file: {exc}") from exc
    _refuse_unknown(table, _TOP_KEYS, name, "")
    columns_table = table.get("columns")
    if not isinstance(columns_table, dict):
        raise MappingError(f"mapping {name}: needs a [columns] table")
    _refuse_unknown(columns_table, _COLUMN_KEYS, name, "columns.")
    for key in ("date", "narration"):
        _text(columns_table, key, name, "columns.")
    columns = Columns(**{key: _text(columns_table, key, name, "columns.") for key in columns_table})
    _check_columns(columns, name)
    date_format = _text(table, "date_format", name, "")
    if "%" not in date_format:
        raise MappingError(f"mapping {name}: date_format {date_format!r} has no % directive")
    amounts = table.get("amounts", "naira")
    if amounts not in {"naira", "kobo"}:
        raise MappingError(f'mapping {name}: amounts must be "naira" or "kobo", not {amounts!r}')
    skip_rows = table.get("skip_rows", 0)
    if isinstance(skip_rows, bool) or not isinstance(skip_rows, int) or not 0 <= skip_rows <= 1000:
        raise MappingError(f"mapping {name}: skip_rows must be a whole number from 0 to 1000")
    return Mapping(
        name=name,
        columns=columns,
        date_format=date_format,
        amounts=Amounts(amounts),
        skip_rows=skip_rows,
        stop_at=_texts(table, "stop_at", name),
        skip_rows_with=_texts(table, "skip_rows_with", name),
        encoding=_encoding(table, name),
        delimiter=_delimiter(table, name),
        sheet=_text(table, "sheet", name, "") if "sheet" in table else None,
    )


def _refuse_unknown(table: dict[str, Any], known: frozenset[str], name: str, prefix: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise MappingError(f"mapping {name}: unknown key {prefix}{unknown[0]}")


def _text(table: dict[str, Any], key: str, name: str, prefix: str) -> str:
    if key not in table:
        raise MappingError(f"mapping {name}: missing key {prefix}{key}")
    value = table[key]
    if not isinstance(value, str) or not value.strip():
        raise MappingError(f"mapping {name}: {prefix}{key} must be a non-empty text")
    return value.strip()


def _texts(table: dict[str, Any], key: str, name: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise MappingError(f"mapping {name}: {key} must be a list of non-empty texts")
    return tuple(v.strip() for v in value)


def _check_columns(columns: Columns, name: str) -> None:
    pair = (columns.debit is not None, columns.credit is not None)
    if columns.amount is not None and any(pair):
        raise MappingError(
            f"mapping {name}: columns.amount cannot be used with columns.debit/columns.credit"
        )
    if columns.amount is None and not all(pair):
        missing = "columns.credit" if pair[0] else "columns.debit" if pair[1] else "columns.amount"
        raise MappingError(f"mapping {name}: missing key {missing}")


def _encoding(table: dict[str, Any], name: str) -> str:
    encoding = _text(table, "encoding", name, "") if "encoding" in table else "utf-8-sig"
    try:
        codecs.lookup(encoding)
    except LookupError as exc:
        raise MappingError(f"mapping {name}: unknown encoding {encoding!r}") from exc
    return encoding


def _delimiter(table: dict[str, Any], name: str) -> str:
    delimiter = table.get("delimiter", ",")
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise MappingError(f"mapping {name}: delimiter must be one character (not a quote)")
    return delimiter
