"""Kobo to naira for people: the only place money stops being an integer of kobo."""

from __future__ import annotations

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
