"""Scripted MockTransport answers for provider client unit tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from provider.client import AsyncProviderClient, ProviderClient

SECRET = "sk_test_unitSECRETvalue0123456789"
BASE = "https://provider.test"
TXN: dict[str, Any] = {
    "reference": "TRF_1",
    "merchant_reference": "m-1",
    "type": "transfer",
    "amount": 100_000,
    "fee": 2_500,
    "status": "pending",
    "failure_reason": None,
    "created_at": "2024-01-01T00:00:00.000Z",
    "completed_at": None,
}
ENQUIRY = {
    "bank_name": "Guaranty Trust Bank",
    "account_name": "ADA",
    "account_number": "0000000018",
}
INITIATION = {
    "reference": "TRF_1",
    "merchant_reference": "m-1",
    "amount": 100_000,
    "status": "pending",
    "fee": 2_500,
}
VA: dict[str, Any] = {"uid": "va_1", "type": "static", "status": "active", "account_number": "1"}

Answer = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def ok(data: Any, status: int = 200, **extra: Any) -> httpx.Response:
    """A success envelope around `data` (ASCII-escaped JSON, so any string can be sent)."""
    envelope = {"status": "success", "message": "ok", "data": data, **extra}
    return httpx.Response(
        status,
        content=json.dumps(envelope).encode(),
        headers={"content-type": "application/json"},
    )


def failed(message: str, status: int = 400, **headers: str) -> httpx.Response:
    """A failure body as the spec shows them."""
    return httpx.Response(status, json={"status": "failed", "message": message}, headers=headers)


class Script:
    """Answers with the queued answers in order (the last one repeats); records requests."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return answer
        return answer(request)


def sync_client(script: Script, **options: Any) -> tuple[ProviderClient, list[float]]:
    """A client over `script` whose sleeps are recorded instead of slept."""
    sleeps: list[float] = []
    options.setdefault("rand", lambda: 0.5)
    client = ProviderClient(
        BASE, SECRET, transport=httpx.MockTransport(script), sleep=sleeps.append, **options
    )
    return client, sleeps


def async_client(script: Script, **options: Any) -> tuple[AsyncProviderClient, list[float]]:
    """The async twin of `sync_client`."""
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    options.setdefault("rand", lambda: 0.5)
    client = AsyncProviderClient(
        BASE, SECRET, transport=httpx.MockTransport(script), sleep=sleep, **options
    )
    return client, sleeps
