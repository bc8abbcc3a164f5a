"""NUBAN check digits, used to warn about an account number before asking the provider."""

from __future__ import annotations

# CBN's NUBAN standard: weights over the 3-digit bank code and the 9-digit serial.
_WEIGHTS = (3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3)


def _digits(value: str, length: int) -> bool:
    return len(value) == length and value.isascii() and value.isdigit()


def check_digit(bank_code: str, serial: str) -> int:
    """The check digit of a 9-digit serial at a bank with a 3-digit CBN code."""
    if not _digits(bank_code, 3) or not _digits(serial, 9):
        raise ValueError("NUBAN needs a 3-digit bank code and a 9-digit serial")
    total = sum(int(d) * w for d, w in zip(bank_code + serial, _WEIGHTS, strict=True))
    return (10 - total % 10) % 10


def nuban_applies(bank_code: str) -> bool:
    """True when the check can be made: only 3-digit CBN codes have a known weighting."""
    return _digits(bank_code, 3)


def is_valid_nuban(account_number: str, bank_code: str) -> bool | None:
    """Whether the number's check digit is right for the bank; None when it cannot be told.

    Only a hint: the provider is the authority (spec, Errors: an account number is
    valid at one bank only, and only an enquiry says so), so callers warn, never refuse.
    """
    if not nuban_applies(bank_code):
        return None
    if not _digits(account_number, 10):
        return False
    return check_digit(bank_code, account_number[:9]) == int(account_number[9])
