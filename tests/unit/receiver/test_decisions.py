"""The webhook decision core: outcomes, row changes and finding texts from hand-built state."""

from __future__ import annotations

import datetime as dt

from ledger.types import DeliveryOutcome, FindingKind
from receiver.decisions import (
    Decision,
    HeldTransfer,
    NewFinding,
    apply_to,
    decide,
    index_transfers,
    match,
    not_applied,
)
from receiver.events import IgnoredEvent, TransferEvent, parse_event
from tests.support.webhooks import encode, failed_body, success_body

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)


def _success(reference: str = "TRF_1", merchant: str | None = "m-1") -> TransferEvent:
    body = success_body(reference, amount=150_000, fee=2500)
    if merchant is None:
        del body["data"]["merchant_reference"]
    else:
        body["data"]["merchant_reference"] = merchant
    event = parse_event(encode(body))
    assert isinstance(event, TransferEvent)
    return event


def _failed(reference: str = "TRF_1") -> TransferEvent:
    event = parse_event(encode(failed_body(reference, merchant_reference="m-1")))
    assert isinstance(event, TransferEvent)
    return event


def _expected(**columns: object) -> HeldTransfer:
    held = HeldTransfer(7, "m-1", None, None, False)
    for name, value in columns.items():
        setattr(held, name, value)
    return held


def _decide(event: TransferEvent, *held: HeldTransfer, recorded: str | None = None) -> Decision:
    by_reference = {t.reference: t for t in held}
    by_provider = {t.provider_reference: t for t in held if t.provider_reference}
    return decide(
        event, recorded_hash=recorded, by_reference=by_reference, by_provider=by_provider, now=NOW
    )


def test_a_copy_with_the_same_content_is_a_duplicate_that_changes_nothing() -> None:
    """An event recorded with the same content hash is a duplicate: no rows, no findings."""
    event = _success()
    decision = _decide(event, _expected(), recorded=event.content_hash)
    assert decision == Decision(DeliveryOutcome.DUPLICATE)


def test_a_copy_with_other_content_is_a_conflicting_delivery() -> None:
    """An event recorded with another content hash conflicts; the first stays applied."""
    decision = _decide(_success(), _expected(), recorded="another hash")
    assert decision.outcome is DeliveryOutcome.CONFLICTING
    assert decision.changes is None and decision.created is None
    assert decision.findings == (
        NewFinding(
            FindingKind.CONFLICTING_DELIVERY,
            "transfer.success for TRF_1 was delivered again with different content; "
            "the first delivery stays applied",
        ),
    )


def test_a_first_success_on_an_expected_transfer_records_its_evidence() -> None:
    """Accepted: the webhook's status, amount, fee and provider reference land on the transfer,
    which becomes due at once."""
    held = _expected()
    decision = _decide(_success(), held)
    assert decision.outcome is DeliveryOutcome.ACCEPTED
    assert decision.transfer is held and decision.created is None
    assert decision.changes == {
        "next_check_at": NOW,
        "updated_at": NOW,
        "provider_reference": "TRF_1",
        "webhook_status": "successful",
        "webhook_amount": 150_000,
        "webhook_fee": 2500,
        "status": "successful",
    }
    assert decision.findings == ()


def test_a_failure_records_its_reason() -> None:
    """A failed event carries its failure reason to the transfer."""
    decision = _decide(_failed(), _expected(provider_reference="TRF_1"))
    assert decision.changes is not None
    assert decision.changes["failure_reason"] == "Account not found"
    assert decision.changes["status"] == "failed"
    assert "provider_reference" not in decision.changes


def test_a_confirmed_transfer_keeps_the_providers_status() -> None:
    """The provider's confirmed answer outranks a webhook: the status is left alone."""
    decision = _decide(_failed(), _expected(confirmed=True))
    assert decision.changes is not None
    assert "status" not in decision.changes
    assert decision.changes["webhook_status"] == "failed"


def test_both_outcomes_by_webhook_raise_a_status_conflict() -> None:
    """A second, different outcome is a status conflict; the first webhook status stays."""
    decision = _decide(_success(), _expected(provider_reference="TRF_1", webhook_status="failed"))
    assert decision.outcome is DeliveryOutcome.ACCEPTED
    assert decision.changes == {"next_check_at": NOW, "updated_at": NOW}
    assert decision.findings == (
        NewFinding(
            FindingKind.STATUS_CONFLICT,
            "webhooks reported both failed and successful for TRF_1",
        ),
    )


def test_a_failure_after_a_confirmed_success_webhook_is_reversal_evidence() -> None:
    """After the provider confirmed a transfer a success webhook had reported, a failure
    replaces that evidence and makes it due at once, with no conflict between webhooks (the
    lookup decides: PRODUCT.md, Reversals)."""
    held = _expected(provider_reference="TRF_1", webhook_status="successful", confirmed=True)
    decision = _decide(_failed(), held)
    assert decision.findings == () and decision.reported is None
    assert decision.changes is not None
    assert decision.changes["next_check_at"] == NOW
    assert decision.changes["webhook_status"] == "failed" and "status" not in decision.changes


def test_a_success_after_a_failure_webhook_on_a_confirmed_transfer_still_conflicts() -> None:
    """Only a failure after confirmation is reversal evidence; a success after a failure
    webhook is still a conflict between webhooks."""
    held = _expected(provider_reference="TRF_1", webhook_status="failed", confirmed=True)
    decision = _decide(_success(), held)
    assert [f.kind for f in decision.findings] == [FindingKind.STATUS_CONFLICT]


def test_the_same_outcome_again_only_makes_the_transfer_due() -> None:
    """An agreeing outcome changes nothing but the times and raises nothing."""
    held = _expected(provider_reference="TRF_1", webhook_status="successful")
    decision = apply_to(_success(), held, by_reference={}, by_provider={}, now=NOW)
    assert decision.changes == {"next_check_at": NOW, "updated_at": NOW}
    assert decision.findings == ()


def test_an_event_no_transfer_names_creates_an_orphan() -> None:
    """Unknown references: a webhook-origin transfer is created and orphan_event raised."""
    decision = _decide(_success(merchant="m-9"))
    assert decision.outcome is DeliveryOutcome.ACCEPTED
    assert decision.transfer == HeldTransfer(None, "m-9", "TRF_1", None, False)
    assert decision.created is not None
    assert decision.created["reference"] == "m-9"
    assert decision.created["provider_reference"] == "TRF_1"
    assert decision.created["origin"] == "webhook"
    assert decision.changes is not None and decision.changes["webhook_status"] == "successful"
    assert decision.findings == (
        NewFinding(
            FindingKind.ORPHAN_EVENT,
            "transfer.success for TRF_1 (merchant reference m-9) that the ledger never "
            "initiated or expected",
        ),
    )


def test_an_orphan_without_a_merchant_reference_is_keyed_by_the_providers() -> None:
    """With no merchant reference the orphan takes the provider's, and the text says none."""
    decision = _decide(_success(merchant=None))
    assert decision.created is not None and decision.created["reference"] == "TRF_1"
    assert "(merchant reference none)" in decision.findings[0].detail


def test_a_provider_reference_another_transfer_holds_is_not_taken() -> None:
    """The provider's reference is recorded only when no transfer already carries it."""
    other = HeldTransfer(8, "TRF_1", None, None, False)
    decision = _decide(_success(), _expected(), other)
    assert decision.transfer is not None and decision.transfer.id == 7
    assert decision.changes is not None and "provider_reference" not in decision.changes


def test_the_merchants_reference_is_matched_before_the_providers() -> None:
    """Matching tries the merchant's reference first, by either column, then the provider's."""
    by_merchant = HeldTransfer(1, "m-1", None, None, False)
    by_provider = HeldTransfer(2, "x", "TRF_1", None, False)
    event = _success()
    assert match(event, {"m-1": by_merchant}, {"TRF_1": by_provider}) is by_merchant
    assert match(event, {}, {"m-1": by_merchant, "TRF_1": by_provider}) is by_merchant
    assert match(event, {"x": by_provider}, {"TRF_1": by_provider}) is by_provider
    assert match(event, {}, {}) is None


def test_a_held_transfer_absorbs_the_columns_the_rules_read() -> None:
    """After absorbing a decision, the next event sees its status and provider reference."""
    held = _expected()
    decision = _decide(_success(), held)
    assert decision.changes is not None
    held.absorb(decision.changes)
    assert (held.provider_reference, held.webhook_status) == ("TRF_1", "successful")
    again = _decide(_failed(), held)
    assert [f.kind for f in again.findings] == [FindingKind.STATUS_CONFLICT]


def test_transfers_are_indexed_by_both_references() -> None:
    """Rows read as HELD_COLUMNS index by merchant's and provider's reference; 0/1 is a bool."""
    by_reference, by_provider = index_transfers(
        [(1, "m-1", "TRF_1", None, 1, 4), (2, "m-2", None, "failed", 0, 0)]
    )
    assert by_reference["m-1"] is by_provider["TRF_1"]
    assert by_reference["m-1"].event_sequence == 4
    assert by_reference["m-1"].confirmed is True and by_reference["m-2"].confirmed is False
    assert set(by_provider) == {"TRF_1"}


def test_deliveries_without_an_event_to_apply() -> None:
    """Nothing parsed keeps the outcome parsing gave; an unhandled event type is ignored."""
    ignored = IgnoredEvent("transfer.reversed", "TRF_1", "{}", "hash")
    assert not_applied(ignored, DeliveryOutcome.INVALID) is DeliveryOutcome.IGNORED
    assert not_applied(None, DeliveryOutcome.INVALID) is DeliveryOutcome.INVALID
    assert not_applied(None, DeliveryOutcome.TOO_LARGE) is DeliveryOutcome.TOO_LARGE


def test_the_first_outcome_of_an_unconfirmed_transfer_is_reported() -> None:
    """An event setting the first webhook outcome carries `transfer.reported`'s data; a second
    outcome, or one on a confirmed transfer, reports nothing."""
    held = HeldTransfer(7, "m-1", None, None, False)
    first = _decide(_success(), held)
    assert first.reported == {
        "reference": "m-1",
        "provider_reference": "TRF_1",
        "status": "successful",
        "webhook_amount": 150_000,
        "webhook_fee": 2500,
        "failure_reason": None,
    }
    held.absorb(first.changes or {})
    assert _decide(_failed(), held).reported is None
    confirmed = HeldTransfer(8, "m-1", "TRF_1", None, True)
    assert _decide(_success(), confirmed).reported is None


def test_an_orphan_is_reported_with_its_provider_reference() -> None:
    """A transfer first heard of in a webhook is reported as created, beside its finding."""
    decision = decide(_failed(), recorded_hash=None, by_reference={}, by_provider={}, now=NOW)
    assert decision.reported is not None
    assert (decision.reported["reference"], decision.reported["provider_reference"]) == (
        "m-1",
        "TRF_1",
    )
    assert decision.reported["status"] == "failed" and decision.reported["failure_reason"]
    assert [f.kind for f in decision.findings] == [FindingKind.ORPHAN_EVENT]
