"""The advice for a finding names the source that differs, never the provider by default."""

from __future__ import annotations

import datetime as dt

import pytest

from ledger.types import FindingKind, TransferStatus
from reconcile.advice import ADVICE, Figures, finance_advice, what_to_do
from reconcile.checks import LedgerView, contract_fee_in, fee_problem
from reconcile.fees import parse_fee_schedule

CLAIM = "claim the difference from the provider"
TAMPERED = "webhook was wrong or tampered with"
MOVED = "The provider moved a different amount"


def test_fee_only_the_webhook_differs() -> None:
    """Quote = provider = ₦10.00 and a webhook saying ₦10.50: blame the webhook, claim nothing."""
    advice = what_to_do("fee_mismatch", Figures(fee=1000, provider_fee=1000, webhook_fee=1050))
    assert TAMPERED in advice and "Nothing to claim" in advice
    assert "claim the difference" not in advice


def test_fee_provider_charged_more_than_quoted() -> None:
    """The provider's fee above its quote: claim the difference, nothing about the webhook."""
    advice = what_to_do("fee_mismatch", Figures(fee=1000, provider_fee=1050, webhook_fee=1050))
    assert advice.startswith("The provider charged more than it quoted")
    assert CLAIM in advice
    assert "webhook" not in advice


def test_fee_provider_charged_less_than_quoted() -> None:
    """The provider's fee below its quote: nothing to claim, book the provider's fee."""
    advice = what_to_do("fee_mismatch", Figures(fee=1000, provider_fee=900))
    assert "charged less than it quoted (₦9.00 against ₦10.00): nothing to claim" in advice
    assert CLAIM not in advice


def test_fee_provider_and_webhook_both_differ_from_the_quote_and_each_other() -> None:
    """Each disagreement gets its own sentence: claim the overcharge, distrust the webhook."""
    advice = what_to_do("fee_mismatch", Figures(fee=1000, provider_fee=1050, webhook_fee=1100))
    assert CLAIM in advice and TAMPERED in advice
    assert "Nothing to claim" not in advice


def test_fee_webhook_differs_before_the_provider_answered() -> None:
    """Only a webhook's fee and no provider record yet: wait, claim nothing on its word."""
    advice = what_to_do("fee_mismatch", Figures(fee=1000, webhook_fee=1050))
    assert "has not confirmed it yet" in advice and "claim nothing" in advice
    assert CLAIM not in advice


def _view(**figures: int | None) -> LedgerView:
    return LedgerView(
        reference="R",
        amount=figures.pop("amount", 500_000),
        fee=figures.pop("fee", None),
        status=TransferStatus.SUCCESSFUL,
        confirmed=True,
        created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        webhook_fee=figures.pop("webhook_fee", None),
    )


def test_fee_above_the_contract_schedule_from_the_checks_own_detail() -> None:
    """Quote and provider agree but exceed PAYRECON_FEE_SCHEDULE: claim it or fix the schedule."""
    schedule = parse_fee_schedule("0-:2500")
    detail = fee_problem(_view(fee=2550), 2550, 500_000, schedule)
    assert detail is not None and contract_fee_in(detail) == 2500
    figures = Figures(amount=500_000, fee=2550, provider_fee=2550, contract_fee=2500)
    advice = what_to_do("fee_mismatch", figures)
    assert "more than your contract allows" in advice and "PAYRECON_FEE_SCHEDULE" in advice
    assert CLAIM in advice
    assert "quoted" not in advice and "webhook" not in advice


def test_fee_only_the_webhook_is_above_the_contract_and_the_provider_has_not_answered() -> None:
    """A webhook fee above the contract with no provider record yet: wait before claiming."""
    schedule = parse_fee_schedule("0-:2500")
    detail = fee_problem(_view(webhook_fee=2600), None, 500_000, schedule)
    assert detail is not None
    figures = Figures(amount=500_000, webhook_fee=2600, contract_fee=contract_fee_in(detail))
    advice = what_to_do("fee_mismatch", figures)
    assert "is above your contract's" in advice and "wait" in advice
    assert CLAIM not in advice


def test_contract_fee_is_read_back_only_from_a_contract_detail() -> None:
    """A detail without the contract clause yields no contract fee."""
    detail = fee_problem(_view(fee=1000, webhook_fee=1050), 1000, 500_000, None)
    assert detail == "fees differ: quoted 1000, webhook 1050, provider 1000 kobo"
    assert contract_fee_in(detail) is None


def test_amount_only_the_webhook_differs() -> None:
    """Provider moved the expected amount, the webhook said otherwise: not the provider's fault."""
    figures = Figures(amount=100_000, provider_amount=100_000, webhook_amount=105_000)
    advice = what_to_do("amount_mismatch", figures)
    assert advice.startswith("Only the webhook's amount differs")
    assert TAMPERED in advice and "no money is missing" in advice
    assert MOVED not in advice


def test_amount_the_provider_moved_a_different_amount() -> None:
    """The provider's amount differs from the expected one: raise it with the provider."""
    figures = Figures(amount=100_000, provider_amount=100_100, webhook_amount=100_100)
    advice = what_to_do("amount_mismatch", figures)
    assert advice.startswith(MOVED) and "raise it with the provider" in advice
    assert "webhook" not in advice


def test_amount_provider_and_webhook_disagree_with_each_other() -> None:
    """Provider and webhook both differ, and from each other: the provider's record counts."""
    figures = Figures(amount=100_000, provider_amount=100_100, webhook_amount=90_000)
    advice = what_to_do("amount_mismatch", figures)
    assert advice.startswith(MOVED) and "the provider's record counts" in advice


def test_amount_webhook_differs_before_the_provider_answered() -> None:
    """Only the webhook differs and the provider has not answered: do not act on it yet."""
    advice = what_to_do("amount_mismatch", Figures(amount=100_000, webhook_amount=105_000))
    assert advice.startswith("Only the webhook reports a different amount")
    assert MOVED not in advice


@pytest.mark.parametrize("kind", ["amount_mismatch", "fee_mismatch"])
def test_figures_that_agree_fall_back_to_the_kinds_advice(kind: str) -> None:
    """With no disagreement left in the figures, the kind's own advice is given."""
    agreeing = Figures(amount=1, fee=1, provider_amount=1, provider_fee=1)
    assert finance_advice(kind, agreeing) == ADVICE[kind]
    assert what_to_do(kind, agreeing).startswith(ADVICE[kind])


@pytest.mark.parametrize("kind", list(FindingKind))
def test_every_kind_has_its_own_advice(kind: FindingKind) -> None:
    """Each finding kind has advice of its own; an unknown kind gets a generic line."""
    assert finance_advice(kind) == ADVICE[kind] != finance_advice("no_such_kind")
    assert what_to_do(kind).startswith(ADVICE[kind])


@pytest.mark.parametrize("kind", list(FindingKind))
def test_finance_advice_names_no_command_or_setting(kind: FindingKind) -> None:
    """Finance's advice is plain language: no command, setting or docs path; ops' adds them."""
    for figures in (
        None,
        Figures(
            amount=500_000,
            fee=1000,
            provider_amount=490_000,
            provider_fee=1100,
            webhook_amount=480_000,
            webhook_fee=1200,
            contract_fee=1050,
        ),
    ):
        advice = finance_advice(kind, figures)
        assert "`" not in advice and "PAYRECON_" not in advice and "docs/" not in advice
        assert "payrecon " not in advice


def test_finance_advice_gives_the_amounts_in_naira() -> None:
    """A provider that moved less names both figures and the gap in naira."""
    advice = finance_advice("amount_mismatch", Figures(amount=500_000, provider_amount=490_000))
    assert "₦4,900.00 instead of ₦5,000.00 (₦100.00 less)" in advice
    assert "kobo" not in advice
