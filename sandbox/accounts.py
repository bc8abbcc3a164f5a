"""Documented test accounts: valid NUBAN numbers per bank, and a few special ones."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cache

from sandbox.banks import BANKS
from sandbox.nuban import make_nuban


class Behaviour(enum.StrEnum):
    """What the sandbox does with transfers to (and enquiries on) an account."""

    SUCCEEDS = "succeeds"
    ENQUIRY_FAILS = "enquiry_fails"
    FAILS_AFTER_PENDING = "fails_after_pending"
    STAYS_PENDING = "stays_pending"


@dataclass(frozen=True)
class TestAccount:
    """One documented test account."""

    __test__ = False  # not a pytest test class despite its name

    bank_code: str
    account_number: str
    account_name: str
    behaviour: Behaviour
    failure_reason: str | None = None


_NAMES = (
    "ADAEZE OKAFOR",
    "BABATUNDE ADEYEMI",
    "CHINEDU EZE",
    "FATIMA BELLO",
    "IFEOMA NWOSU",
    "MUSA ABDULLAHI",
    "NGOZI OBI",
    "OLUWASEUN AJAYI",
    "TUNDE BAKARE",
    "YETUNDE ALABI",
    "EMEKA UCHE",
    "HALIMA SANI",
    "KELECHI IBEKWE",
    "AISHA MOHAMMED",
)

ACCOUNTS_PER_BANK = 3
SPECIAL_BANK_CODE = "058"  # Guaranty Trust Bank holds the special accounts
DORMANT_REASON = "Beneficiary account is dormant"


@cache
def documented_accounts() -> tuple[TestAccount, ...]:
    """Every documented test account, normal ones first (serial = bank code + 6 digits)."""
    accounts: list[TestAccount] = []
    for index, bank in enumerate(BANKS):
        for k in range(1, ACCOUNTS_PER_BANK + 1):
            name = _NAMES[(index * ACCOUNTS_PER_BANK + k - 1) % len(_NAMES)]
            number = make_nuban(bank.code, f"{bank.code}{k:06d}")
            accounts.append(TestAccount(bank.code, number, name, Behaviour.SUCCEEDS))
    code = SPECIAL_BANK_CODE
    accounts += [
        TestAccount(
            code, make_nuban(code, f"{code}999991"), "ENQUIRY FAILS", Behaviour.ENQUIRY_FAILS
        ),
        TestAccount(
            code,
            make_nuban(code, f"{code}999992"),
            "DORMANT ACCOUNT",
            Behaviour.FAILS_AFTER_PENDING,
            DORMANT_REASON,
        ),
        TestAccount(code, make_nuban(code, f"{code}999993"), "SLOW BANK", Behaviour.STAYS_PENDING),
    ]
    return tuple(accounts)


def find_account(bank_code: str, account_number: str) -> TestAccount | None:
    """The test account with this number at this bank (numbers are valid at one bank only)."""
    for account in documented_accounts():
        if account.bank_code == bank_code and account.account_number == account_number:
            return account
    return None
