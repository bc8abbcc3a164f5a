"""Numbers typed by people (admin API bodies, query strings, CSV cells, CLI options): one
strict rule, pure (docs/rules.md: Numbers from people)."""

from __future__ import annotations

import re

from ledger.errors import NumberInputError

# Money is int kobo from 0 to 2^63-1, the range of a signed 64-bit column on both databases.
MAX_KOBO = 2**63 - 1
# `re`'s [0-9] is ASCII only; str.isdigit(), \d and int() also take "١٠٠", "²" or "1_000".
_ASCII_DIGITS = re.compile(r"[0-9]+")


def kobo_from_json(value: object, *, minimum: int = 0) -> int:
    """Money from a JSON body: a JSON integer only (not a string, decimal or boolean), from
    `minimum` to MAX_KOBO (docs/rules.md: Numbers from people). NumberInputError otherwise."""
    # bool is an int in Python, and JSON true is no amount.
    if isinstance(value, bool) or not isinstance(value, int):
        raise NumberInputError(f"must be a JSON integer number of kobo, not {_json_kind(value)}")
    return _in_range(value, minimum, MAX_KOBO, " kobo")


def kobo_from_text(text: str, *, minimum: int = 0) -> int:
    """Money typed as text (a CLI option, a CSV cell, a query string): ASCII digits 0-9 only,
    spaces around allowed, from `minimum` to MAX_KOBO. NumberInputError otherwise."""
    return whole_number_from_text(text, minimum=minimum, maximum=MAX_KOBO, unit=" kobo")


def whole_number_from_text(text: str, *, minimum: int, maximum: int, unit: str = "") -> int:
    """A whole number typed by a person: ASCII digits only (no sign, `_`, exponent or another
    script's digits), spaces around allowed, from `minimum` to `maximum`; NumberInputError
    otherwise."""
    digits = text.strip(" \t")
    if not _ASCII_DIGITS.fullmatch(digits):
        raise NumberInputError(f"must be a whole number{unit and ' of' + unit} in digits 0-9")
    # Length first: int() of a long string is slow, and refused past 4300 digits.
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(maximum)):
        raise NumberInputError(f"must be from {minimum} to {maximum}{unit}")
    return _in_range(int(significant), minimum, maximum, unit)


def _in_range(value: int, minimum: int, maximum: int, unit: str) -> int:
    if not minimum <= value <= maximum:
        raise NumberInputError(f"must be from {minimum} to {maximum}{unit}")
    return value


_JSON_KINDS = ((bool, "true/false"), (str, "a string"), (float, "a decimal number"))


def _json_kind(value: object) -> str:
    for kind, name in _JSON_KINDS:
        if isinstance(value, kind):
            return name
    if value is None:
        return "null"
    return "an array" if isinstance(value, list) else "an object"
