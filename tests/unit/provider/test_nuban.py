"""The NUBAN check-digit helper (CBN weights 3,7,3,3,7,3,3,7,3,3,7,3)."""

from __future__ import annotations

import logging

import pytest

from provider.nuban import check_digit, is_valid_nuban, nuban_applies
from tests.unit.provider.support import ENQUIRY, Script, ok, sync_client


def test_check_digit_by_hand() -> None:
    """058 + 000000001: 5*7 + 8*3 + 1*3 = 62, so the check digit is 8."""
    assert check_digit("058", "000000001") == 8
    assert check_digit("011", "000001457") == 9  # 7 + 3 + 3 + 12 + 35 + 21 = 81
    assert check_digit("000", "000000000") == 0  # (10 - 0) % 10


def test_valid_and_invalid_numbers() -> None:
    """Only the right last digit passes, and only at that bank."""
    assert is_valid_nuban("0000000018", "058") is True
    assert is_valid_nuban("0000000017", "058") is False
    assert is_valid_nuban("0000014579", "011") is True
    assert is_valid_nuban("0000000018", "011") is False
    assert is_valid_nuban("00000018", "058") is False


def test_codes_that_are_not_three_digits_cannot_be_checked() -> None:
    """NIP-style 6-digit codes have no known weighting: the answer is None, not False."""
    assert is_valid_nuban("0000000018", "000013") is None
    assert not nuban_applies("0A8")
    assert nuban_applies("058")


def test_check_digit_rejects_bad_parts() -> None:
    """Parts of the wrong length are an error."""
    with pytest.raises(ValueError):
        check_digit("58", "000000001")


def _warned(caplog: pytest.LogCaptureFixture) -> bool:
    return any(
        record.levelno == logging.WARNING and record.msg["event"] == "provider.nuban_check_failed"
        for record in caplog.records
        if record.name == "provider.core"
    )


def test_bad_check_digit_only_warns_and_still_asks_the_provider(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A number failing the check is still sent (the provider decides); a warning is logged."""
    caplog.set_level(logging.WARNING, logger="provider")
    script = Script(ok(ENQUIRY))
    client, _ = sync_client(script)
    client.account_enquiry("0000000017", "058")
    assert len(script.requests) == 1
    assert _warned(caplog)


def test_good_check_digit_logs_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    """A valid number gives no NUBAN warning."""
    caplog.set_level(logging.WARNING, logger="provider")
    client, _ = sync_client(Script(ok(ENQUIRY)))
    client.account_enquiry("0000000018", "058")
    assert not _warned(caplog)
