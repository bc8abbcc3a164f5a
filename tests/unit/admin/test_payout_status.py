"""The admin API's HTTP status for each way a payout fails (payments/ carries none)."""

from __future__ import annotations

import pytest

from admin.api import PAYOUT_STATUS, payout_status
from payments.errors import (
    PayoutAccessDeniedError,
    PayoutError,
    PayoutErrorKind,
    PayoutPendingResolutionError,
    PayoutRejectedError,
)


def test_every_kind_has_a_status() -> None:
    """No payout error can reach the API without a status to answer with."""
    assert set(PAYOUT_STATUS) == set(PayoutErrorKind)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (PayoutRejectedError("refused", cause="Insufficient funds"), 422),
        (PayoutAccessDeniedError("refused", cause="Access denied."), 403),
        (PayoutPendingResolutionError("lost"), 202),
    ],
)
def test_a_whitelist_refusal_is_403_other_refusals_422(error: PayoutError, status: int) -> None:
    """A refusal by IP whitelisting passes the provider's 403 on; other refusals are 422."""
    assert payout_status(error) == status
