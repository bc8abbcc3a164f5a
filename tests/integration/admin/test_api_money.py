"""Money in admin API bodies is a JSON integer of kobo, or the request is 422 and nothing is
stored (PRODUCT.md: Numbers from people)."""

from __future__ import annotations

import httpx
from sqlalchemy import Engine, func, select

from ledger.db import read_session
from ledger.models import Transfer
from tests.support.apps import ADMIN

AUTH = {"authorization": f"Bearer {ADMIN}", "content-type": "application/json"}
# Raw JSON tokens for the amount: each is valid JSON, none is a JSON integer of kobo in range.
HOSTILE = [
    '"100"',
    '"\\u0661\\u0660\\u0660"',  # "١٠٠": int() reads 100
    '"١٠٠"',
    '"²"',  # was a 500
    '"1_000"',
    '""',
    "10.5",
    "100.0",
    "1e2",
    "1e400",
    "NaN",
    "true",
    "false",
    "-1",
    "9223372036854775808",
    "[100]",
    '{"kobo": 100}',
]


def _stored(engine: Engine) -> int:
    with read_session(engine) as session:
        return int(session.execute(select(func.count()).select_from(Transfer)).scalar_one())


def _answers(url: str, bodies: dict[str, str]) -> dict[str, tuple[int, str | None]]:
    """(status, field) of POSTing each body, by the hostile token it holds."""
    answers = {}
    for token, body in bodies.items():
        response = httpx.post(url, content=body, headers=AUTH)
        answers[token] = (response.status_code, response.json().get("field"))
    return answers


def test_hostile_amounts_and_fees_of_expected_transfers_are_422(
    receiver_url: str, engine: Engine
) -> None:
    """`POST /api/transfers/expected` refuses each hostile amount or fee with 422 naming the
    field, and stores nothing."""
    url = f"{receiver_url}/api/transfers/expected"
    amounts = _answers(url, {t: f'{{"reference": "H-1", "amount": {t}}}' for t in HOSTILE})
    fees = _answers(url, {t: f'{{"reference": "H-2", "amount": 100, "fee": {t}}}' for t in HOSTILE})
    assert amounts == {token: (422, "amount") for token in HOSTILE}
    assert fees == {token: (422, "fee") for token in HOSTILE}
    assert _stored(engine) == 0


def test_the_largest_amount_is_taken(receiver_url: str) -> None:
    """2^63-1 kobo is a valid amount (the refusals above are not a blanket refusal)."""
    url = f"{receiver_url}/api/transfers/expected"
    body = f'{{"reference": "MAX-1", "amount": {2**63 - 1}, "fee": 0}}'
    response = httpx.post(url, content=body, headers=AUTH)
    assert response.status_code == 201, response.text
    assert (response.json()["amount"], response.json()["fee"]) == (2**63 - 1, 0)


def test_hostile_payout_amounts_are_422_before_any_call(
    stack: tuple[str, str], engine: Engine
) -> None:
    """`POST /api/transfers` refuses each hostile amount (and 0) with 422 naming `amount`;
    nothing is stored and nothing reaches the provider."""
    url, sandbox_url = stack
    tokens = [*HOSTILE, "0"]
    rest = '"bank_code": "044", "account_number": "0440000017", "reference": "HP-1"'
    answers = _answers(f"{url}/api/transfers", {t: f'{{"amount": {t}, {rest}}}' for t in tokens})
    sent = httpx.get(f"{sandbox_url}/_sandbox/transfers").json()["transfers"]
    assert answers == {token: (422, "amount") for token in tokens}
    assert _stored(engine) == 0 and sent == []
