"""Statement money as exact kobo: naira text, kobo text, MT940 and XML amounts, XLSX number
cells; never through a float (docs/rules.md "Statements and period tie-out": naira text becomes
kobo exactly)."""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import re

from statements.errors import FieldValueError

# A stored amount or balance must fit a signed 64-bit column on both databases.
MAX_KOBO = 2**63 - 1
# Texts longer than this are no money and are cut in messages (a reason fits on a line).
_MAX_TEXT = 40

# [0-9] is ASCII only: \d would also take other scripts' digits, which int() accepts.
_NAIRA = re.compile(
    r"(?P<int>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.(?P<frac>[0-9]+))?",
)
# What `plain_naira` reads: no sign, no spaces, one or two decimals.
_PLAIN = re.compile(r"([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.([0-9]{1,2}))?")
_KOBO = re.compile(r"[0-9]+")
# SWIFT amounts: digits, one comma as the decimal mark, which may end the amount ("100,").
_MT940 = re.compile(r"(?P<int>[0-9]+),(?P<frac>[0-9]*)")
# xs:decimal as ISO 20022 writes amounts: no sign, no thousands separators.
_XML = re.compile(r"(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]+))?")


class Amounts(enum.StrEnum):
    """How a mapping's amount columns are written (the mapping key `amounts`)."""

    NAIRA = "naira"
    KOBO = "kobo"


def shown(text: str) -> str:
    """`text` quoted for a message, cut when long."""
    cut = text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + "…"
    return f'"{cut}"'


def kobo_from_naira(text: str) -> int:
    """Signed kobo from naira text: `"1,250.50"` → 125050, `"1250"` → 125000, `"-3.5"` and
    `"(3.50)"` (accountants' negative) → -350. Commas only as thousands separators in their
    places; at most two decimals; ASCII digits; FieldValueError otherwise."""
    body, negative = _sign(text.strip())
    match = _NAIRA.fullmatch(body)
    if match is None:
        raise FieldValueError(f"{shown(text)} is not an amount in naira")
    return _kobo(text, match["int"].replace(",", ""), match["frac"] or "", negative)


def plain_naira(text: str) -> int | None:
    """Kobo from the plain naira text most lines hold — ASCII digits, commas as thousands
    separators in their places, at most two decimals, no sign (`"1,250.50"` → 125050) — read
    by one match of a regular expression; None for any other text, which `kobo_from_naira`
    reads (or refuses, with its reason). Where both read a text they agree."""
    match = _PLAIN.fullmatch(text)
    if match is None:
        return None
    whole, fraction = match.groups()
    digits = whole.replace(",", "") if "," in whole else whole
    # 16 digits are always within MAX_KOBO as kobo; longer ones take the full reading.
    if len(digits) > 16:
        return None
    kobo = int(digits) * 100
    if fraction:
        kobo += int(fraction) * (10 if len(fraction) == 1 else 1)
    return kobo


def kobo_from_kobo_text(text: str) -> int:
    """Signed kobo from kobo text: ASCII digits with an optional leading `-`."""
    body, negative = _sign(text.strip())
    if text.strip().startswith("(") or not _KOBO.fullmatch(body):
        raise FieldValueError(f"{shown(text)} is not a whole number of kobo")
    digits = body.lstrip("0") or "0"
    if len(digits) > len(str(MAX_KOBO)):
        raise FieldValueError(f"{shown(text)} is too large")
    return _in_range(text, -int(digits) if negative else int(digits))


def kobo_from_amount_text(text: str, amounts: Amounts) -> int:
    """Signed kobo from a cell's text written as the mapping's `amounts` says."""
    if amounts is Amounts.KOBO:
        return kobo_from_kobo_text(text)
    return kobo_from_naira(text)


def kobo_from_mt940(text: str) -> int:
    """Kobo from an MT940 amount: digits with a comma decimal mark (`"12500,00"`, `"100,"`),
    no sign (the D/C mark carries it), at most two decimals."""
    match = _MT940.fullmatch(text)
    if match is None:
        raise FieldValueError(f"{shown(text)} is not an MT940 amount (digits, a comma, decimals)")
    return _kobo(text, match["int"], match["frac"], negative=False)


def kobo_from_xml(text: str) -> int:
    """Kobo from an ISO 20022 amount: digits with an optional dot and at most two decimals."""
    match = _XML.fullmatch(text.strip())
    if match is None:
        raise FieldValueError(f"{shown(text)} is not an amount (digits, a dot, decimals)")
    return _kobo(text, match["int"], match["frac"] or "", negative=False)


def kobo_from_cell(value: object, amounts: Amounts) -> int:
    """Signed kobo from an XLSX cell as openpyxl gives it: text as `kobo_from_amount_text`,
    an int, a float or a Decimal as a number of naira (or of kobo); FieldValueError for
    dates, booleans, NaN, infinities and numbers with more than two decimals."""
    if isinstance(value, str):
        return kobo_from_amount_text(value, amounts)
    if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
        kind = "a date" if isinstance(value, dt.date | dt.time) else f"a {type(value).__name__}"
        raise FieldValueError(f"holds {kind}, not an amount")
    # repr() of a float is the shortest text that reads back as the same float, so 0.1 is
    # "0.1" here, never 0.1000000000000000055511151231257827.
    number = decimal.Decimal(repr(value)) if isinstance(value, float) else decimal.Decimal(value)
    if not number.is_finite():
        raise FieldValueError(f"{number} is not an amount")
    scale = 1 if amounts is Amounts.KOBO else 100
    kobo = number * scale
    if kobo != kobo.to_integral_value():
        decimals = "a fraction" if amounts is Amounts.KOBO else "more than two decimals"
        raise FieldValueError(f"{number} has {decimals}")
    return _in_range(str(number), int(kobo))


def _sign(text: str) -> tuple[str, bool]:
    if text.startswith("(") and text.endswith(")"):
        return text[1:-1].strip(), True
    if text.startswith("-"):
        return text[1:], True
    return text, False


def _kobo(text: str, whole: str, fraction: str, negative: bool) -> int:
    if len(fraction) > 2:
        raise FieldValueError(f"{shown(text)} has more than two decimals")
    # Length first: int() of a long text is slow (and refused past 4300 digits).
    whole = whole.lstrip("0") or "0"
    if len(whole) > len(str(MAX_KOBO)):
        raise FieldValueError(f"{shown(text)} is too large")
    kobo = int(whole) * 100 + int(fraction.ljust(2, "0") or "0")
    return _in_range(text, -kobo if negative else kobo)


def _in_range(text: str, kobo: int) -> int:
    if abs(kobo) > MAX_KOBO:
        raise FieldValueError(f"{shown(text)} is too large")
    return kobo
