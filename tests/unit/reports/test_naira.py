"""Kobo rendered as naira with thousands separators."""

from __future__ import annotations

import pytest

from reconcile.reports.naira import naira, naira_number, naira_text


@pytest.mark.parametrize(
    ("kobo", "text"),
    [
        (0, "₦0.00"),
        (5, "₦0.05"),
        (123_456, "₦1,234.56"),
        (100_000_000_00, "₦100,000,000.00"),
        (-2_550, "-₦25.50"),
        (2**63 - 1, "₦92,233,720,368,547,758.07"),
    ],
)
def test_kobo_become_naira_with_separators(kobo: int, text: str) -> None:
    """Exact integer arithmetic, two decimals, commas every three digits."""
    assert naira(kobo) == text


def test_missing_amounts_show_a_dash_and_numbers_divide_by_100() -> None:
    """None renders as an em dash; spreadsheet numbers are naira."""
    assert naira(None) == "—"
    assert naira(1_075, sign=False) == "10.75"
    assert naira_number(1_075) == 10.75


@pytest.mark.parametrize(
    ("detail", "text"),
    [
        (
            "fees differ: quoted 1000, webhook 1050, provider 1000 kobo",
            "fees differ: quoted ₦10.00, webhook ₦10.50, provider ₦10.00",
        ),
        (
            "expected 1500000 kobo; provider amount 1500100, webhook amount 1500200 kobo",
            "expected ₦15,000.00; provider amount ₦15,001.00, webhook amount ₦15,002.00",
        ),
        (
            "provider fee 2550 kobo, webhook fee 2600 kobo exceeds the contract fee 2500 kobo",
            "provider fee ₦25.50, webhook fee ₦26.00 exceeds the contract fee ₦25.00",
        ),
        ("refund of -150 kobo", "refund of -₦1.50"),
        ("pending for 42 s (limit 20 s)", "pending for 42 s (limit 20 s)"),
        ("orphan INV-1002 kobo, 1.50 kobo", "orphan INV-1002 kobo, 1.50 kobo"),
        ("1" * 30 + " kobo", "1" * 30 + " kobo"),  # longer than any kobo figure: not money
    ],
)
def test_detail_figures_are_written_in_naira(detail: str, text: str) -> None:
    """Every kobo figure of a finding detail, lists included, becomes naira; nothing else does."""
    assert naira_text(detail) == text
