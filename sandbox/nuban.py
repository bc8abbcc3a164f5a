"""NUBAN check digits (CBN's 10-digit account number standard)."""

from __future__ import annotations

import re

_WEIGHTS = (3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3)
_DIGITS = re.compile(r"[0-9]+")


def check_digit(bank_code: str, serial: str) -> int:
    """The NUBAN check digit of a 9-digit serial at a bank with a 3-digit code."""
    if len(bank_code) != 3 or len(serial) != 9:
        raise ValueError("NUBAN needs a 3-digit bank code and a 9-digit serial")
    if not _DIGITS.fullmatch(bank_code + serial):
        raise ValueError("NUBAN parts must be ASCII digits")
    total = sum(int(d) * w for d, w in zip(bank_code + serial, _WEIGHTS, strict=True))
    return (10 - total % 10) % 10


def make_nuban(bank_code: str, serial: str) -> str:
    """The 10-digit account number for a serial at a bank."""
    return serial + str(check_digit(bank_code, serial))


def is_valid_nuban(bank_code: str, account_number: str) -> bool:
    """True when the account number's check digit is right for that bank."""
    if len(account_number) != 10 or not _DIGITS.fullmatch(account_number):
        return False
    if len(bank_code) != 3 or not _DIGITS.fullmatch(bank_code):
        return False
    return check_digit(bank_code, account_number[:9]) == int(account_number[9])
