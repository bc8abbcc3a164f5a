"""Kobo to naira for people: the only place money stops being an integer of kobo."""

from __future__ import annotations

import re

NAIRA_SIGN = "\u20a6"
KOBO_PER_NAIRA = 100


def naira(kobo: int | None, *, sign: bool = True) -> str:
    """`123456` → `"₦1,234.56"`; negative amounts keep their minus before the sign."""
    if kobo is None:
        return "\u2014"
    whole, part = divmod(abs(kobo), KOBO_PER_NAIRA)
    text = f"{whole:,}.{part:02d}"
    prefix = "-" if kobo < 0 else ""
    return f"{prefix}{NAIRA_SIGN if sign else ''}{text}"


def naira_number(kobo: int) -> float:
    """Kobo as a naira number for spreadsheets (exact to the kobo below 2**53 kobo)."""
    return kobo / KOBO_PER_NAIRA


# Money in a finding's detail: a whole number followed by " kobo", or a list whose last item
# is ("fees differ: quoted 2500, webhook 2550, provider 2500 kobo"), where every item is kobo.
# Never a number glued to a word or a dash (`INV-1002`). The list is taken whole and
# possessively, so a detail quoting a long hostile reference is still read in linear time.
_NUMBER = r"-?\d{1,19}(?!\d)"  # kobo fit in 63 bits: longer digit runs are not money
_FIGURES = re.compile(rf"(?<![\w.-]){_NUMBER}(?:, [a-z][a-z ]* {_NUMBER})*+(?P<unit> kobo\b)?")


def naira_text(text: str) -> str:
    """A finding's detail for people: every kobo figure written in naira (`2550` → `₦25.50`)."""

    def in_naira(match: re.Match[str]) -> str:
        if match.group("unit") is None:
            return match.group(0)
        figures = match.group(0)[: match.start("unit") - match.start()]
        return re.sub(_NUMBER, lambda number: naira(int(number.group(0))), figures)

    return _FIGURES.sub(in_naira, text)
