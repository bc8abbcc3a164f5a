"""Build webhook bodies like the provider's (spec: Events) for tests and benchmarks."""

from __future__ import annotations

import json
from typing import Any


def success_body(
    reference: str, *, merchant_reference: str | None = None, amount: int = 100_000, fee: int = 1000
) -> dict[str, Any]:
    """A `transfer.success` body."""
    return {
        "event": "transfer.success",
        "data": {
            "reference": reference,
            "merchant_reference": merchant_reference or f"m-{reference}",
            "amount": amount,
            "status": "successful",
            "fee": fee,
        },
    }


def failed_body(
    reference: str, *, merchant_reference: str | None = None, reason: str = "Account not found"
) -> dict[str, Any]:
    """A `transfer.failed` body."""
    return {
        "event": "transfer.failed",
        "data": {
            "reference": reference,
            "merchant_reference": merchant_reference or f"m-{reference}",
            "status": "failed",
            "failure_reason": reason,
        },
    }


def encode(body: dict[str, Any]) -> bytes:
    """The body as the provider would send it."""
    return json.dumps(body).encode()
