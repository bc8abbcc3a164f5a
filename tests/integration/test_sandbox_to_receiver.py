"""Webhooks from the sandbox reach the real receiver: the ledger holds each outcome."""

from __future__ import annotations

import time

import httpx
from sqlalchemy import Engine, select

from ledger.db import read_session
from ledger.models import Transfer
from payrecon.app import create_app
from payrecon.servers import free_port, running_server
from payrecon.settings import load_settings
from provider.client import ProviderClient
from sandbox.app import create_app as create_sandbox
from sandbox.config import SandboxConfig


def _wait_for_outcomes(engine: Engine, count: int) -> list[Transfer]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with read_session(engine) as session:
            rows = list(session.execute(select(Transfer).order_by(Transfer.reference)).scalars())
        if len(rows) == count and all(r.webhook_status for r in rows):
            return rows
        time.sleep(0.1)
    raise AssertionError("the receiver did not get every webhook in time")


def test_transfers_initiated_through_the_client_end_in_the_receiver(
    database_url: str, engine: Engine
) -> None:
    """A success and a dormant-account failure arrive as webhooks with the spec's figures."""
    port = free_port()
    config = SandboxConfig(
        seed=11, complete_after=0.2, webhook_url=f"http://127.0.0.1:{port}/webhook"
    )
    receiver = create_app(load_settings(database_url=database_url), engine=engine)
    with running_server(receiver, port=port), running_server(create_sandbox(config)) as sandbox:
        with ProviderClient(sandbox, config.secret_key) as client:
            good = client.initiate_transfer(
                amount=750_000, bank_code="044", account_number="0440000017", reference="W-1"
            )
            bad = client.initiate_transfer(
                amount=20_000, bank_code="058", account_number="0589999929", reference="W-2"
            )
        rows = _wait_for_outcomes(engine, 2)
        attempts = httpx.get(f"{sandbox}/_sandbox/webhooks").json()["attempts"]
    success, failure = rows
    assert (success.reference, success.provider_reference) == ("W-1", good.reference)
    assert (success.webhook_status, success.webhook_amount, success.webhook_fee) == (
        "successful",
        750_000,
        good.fee,
    )
    assert (failure.provider_reference, failure.webhook_status) == (bad.reference, "failed")
    assert failure.failure_reason == "Beneficiary account is dormant"
    assert not success.confirmed and not failure.confirmed
    assert all(a["status_code"] == 200 for a in attempts)
