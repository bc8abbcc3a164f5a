"""The fee schedule and NUBAN check digits."""

from __future__ import annotations

import pytest

from sandbox.accounts import Behaviour, documented_accounts, find_account
from sandbox.banks import BANKS
from sandbox.fees import collection_fee, transfer_fee
from sandbox.nuban import check_digit, is_valid_nuban, make_nuban


@pytest.mark.parametrize(
    ("amount", "fee"),
    [(1, 1_000), (500_000, 1_000), (500_001, 2_500), (5_000_000, 2_500), (5_000_001, 5_000)],
)
def test_transfer_fee_tiers(amount, fee):
    """Transfer fees follow the documented tiers at their boundaries."""
    assert transfer_fee(amount) == fee


def test_collection_fee_is_one_percent_capped():
    """Collection fee is 1 % rounded down, capped at ₦2,000."""
    assert collection_fee(10_000) == 100
    assert collection_fee(99) == 0
    assert collection_fee(100_000_000) == 200_000


def test_check_digit_by_hand():
    """058 + 000000001: weighted sum 3*0+7*5+3*8+...+3*1 = 62, so the check digit is 8."""
    # digits 0,5,8,0,0,0,0,0,0,0,0,1 with weights 3,7,3,3,7,3,3,7,3,3,7,3 → 35 + 24 + 3 = 62
    assert check_digit("058", "000000001") == 8
    assert make_nuban("058", "000000001") == "0000000018"


def test_validity_depends_on_the_bank():
    """A valid number at one bank is (normally) invalid at another, and bad digits fail."""
    number = make_nuban("044", "123456789")
    assert is_valid_nuban("044", number)
    assert not is_valid_nuban("058", number)
    assert not is_valid_nuban("044", number[:9] + str((int(number[9]) + 1) % 10))
    assert not is_valid_nuban("044", "12345")
    assert not is_valid_nuban("044", "١٢٣٤٥٦٧٨٩٠")


def test_every_test_account_is_a_valid_nuban_at_its_bank():
    """Each documented account passes the NUBAN check at its own bank, and every bank has some."""
    accounts = documented_accounts()
    assert all(is_valid_nuban(a.bank_code, a.account_number) for a in accounts)
    assert {a.bank_code for a in accounts} == {b.code for b in BANKS}
    assert len({(a.bank_code, a.account_number) for a in accounts}) == len(accounts)


def test_special_accounts_exist_once_each():
    """Exactly one account per special behaviour; the dormant one has a failure reason."""
    specials = [a for a in documented_accounts() if a.behaviour is not Behaviour.SUCCEEDS]
    assert sorted(a.behaviour.value for a in specials) == [
        "enquiry_fails",
        "fails_after_pending",
        "stays_pending",
    ]
    dormant = next(a for a in specials if a.behaviour is Behaviour.FAILS_AFTER_PENDING)
    assert dormant.failure_reason == "Beneficiary account is dormant"
    assert find_account("044", dormant.account_number) is None
