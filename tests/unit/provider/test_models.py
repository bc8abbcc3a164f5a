"""Wire models: known fields typed, unknown fields kept."""

from __future__ import annotations

from datetime import UTC, datetime

from provider.models import Page, TransferStatus, VirtualAccountStatus, VirtualAccountType
from tests.unit.provider.support import TXN, VA, Script, ok, sync_client


def test_transaction_keeps_unknown_fields() -> None:
    """A field the spec does not name is carried through, not dropped."""
    client, _ = sync_client(Script(ok({**TXN, "session_id": "S1", "narration": "x"})))
    result = client.get_transaction("TRF_1")
    assert result.model_extra == {"session_id": "S1", "narration": "x"}
    assert result.model_dump()["session_id"] == "S1"


def test_transaction_fields_are_typed() -> None:
    """Status is an enum, amounts are ints, times are aware datetimes."""
    data = {**TXN, "status": "successful", "completed_at": "2024-01-01T00:00:05.250Z"}
    result = sync_client(Script(ok(data)))[0].get_transaction("TRF_1")
    assert result.status is TransferStatus.SUCCESSFUL
    assert result.amount == 100_000 and result.fee == 2_500
    assert result.completed_at == datetime(2024, 1, 1, 0, 0, 5, 250_000, tzinfo=UTC)


def test_optional_transaction_fields_may_be_absent() -> None:
    """Only reference, amount and status are essential."""
    data = {"reference": "TRF_1", "amount": 5, "status": "failed"}
    result = sync_client(Script(ok(data)))[0].get_transaction("TRF_1")
    assert result.fee is None and result.failure_reason is None


def test_virtual_account_is_tolerant() -> None:
    """A virtual account record (shape not shown by the spec) keeps what it does not know."""
    data = {**VA, "customer": {"first_name": "Ada", "nin": "1"}, "provider_id": 7}
    account = sync_client(Script(ok(data)))[0].get_virtual_account("va_1")
    assert account.type is VirtualAccountType.STATIC
    assert account.status is VirtualAccountStatus.ACTIVE
    assert account.customer is not None and account.customer.first_name == "Ada"
    assert account.customer.model_extra == {"nin": "1"}
    assert account.model_extra == {"provider_id": 7}


def test_page_is_last() -> None:
    """A page is last when it is empty or reaches the total."""
    assert Page(items=[1], page=2, per_page=1, total=2).is_last
    assert not Page(items=[1], page=1, per_page=1, total=2).is_last
    assert Page(items=[], page=1, per_page=10, total=99).is_last
