"""The options of `payrecon transfer send` for a sandbox test account."""

from __future__ import annotations

from typing import Any


def send_options(account: dict[str, Any], reference: str, amount: int = 250_000) -> list[str]:
    """`--amount … --bank-code … --account-number … --reference …` paying `account`."""
    return [
        "--amount",
        str(amount),
        "--bank-code",
        account["bank_code"],
        "--account-number",
        account["account_number"],
        "--reference",
        reference,
    ]
