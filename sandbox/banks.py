"""The banks the sandbox knows, with their CBN codes (the codes endpoints 8 and 9 accept)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bank:
    """A bank as `GET /v1/banks` lists it."""

    name: str
    code: str


BANKS: tuple[Bank, ...] = (
    Bank("Access Bank", "044"),
    Bank("Citibank Nigeria", "023"),
    Bank("Ecobank Nigeria", "050"),
    Bank("Fidelity Bank", "070"),
    Bank("First Bank of Nigeria", "011"),
    Bank("First City Monument Bank", "214"),
    Bank("Guaranty Trust Bank", "058"),
    Bank("Heritage Bank", "030"),
    Bank("Jaiz Bank", "301"),
    Bank("Keystone Bank", "082"),
    Bank("Polaris Bank", "076"),
    Bank("Providus Bank", "101"),
    Bank("Stanbic IBTC Bank", "221"),
    Bank("Standard Chartered Bank", "068"),
    Bank("Sterling Bank", "232"),
    Bank("Union Bank of Nigeria", "032"),
    Bank("United Bank for Africa", "033"),
    Bank("Unity Bank", "215"),
    Bank("Wema Bank", "035"),
    Bank("Zenith Bank", "057"),
)

# Virtual accounts and collection accounts are issued at this bank (a common
# choice of Nigerian providers; the spec does not say).
ISSUING_BANK_CODE = "035"


def bank_by_code(code: str) -> Bank | None:
    """Return the bank with this CBN code, or None."""
    for bank in BANKS:
        if bank.code == code:
            return bank
    return None
