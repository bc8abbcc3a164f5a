"""Kobo rendered as naira with thousands separators."""

from __future__ import annotations

import pytest

from reconcile.reports.naira import naira, naira_number


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
