"""Provider answers holding text no database stores: the pass still confirms the transfer."""

from __future__ import annotations

import asyncio
import datetime as dt

from sqlalchemy import Engine

from ledger.db import read_session
from ledger.queries import find_transfer
from ledger.types import utcnow
from payments.payouts import PayoutRequest, send_payout
from provider.client import AsyncProviderClient, ProviderClient
from reconcile.poller import run_pass
from tests.integration.reconcile.helpers import running_sandbox, settings_for


def test_a_nul_in_the_failure_reason_does_not_stop_the_pass(
    database_url: str, engine: Engine
) -> None:
    """A failed transfer whose reason holds NUL (PostgreSQL's text refuses it; the pass used
    to fail on it every time) is confirmed failed with the NUL dropped."""
    start = utcnow()
    with running_sandbox(complete_after=None) as sandbox:
        account = sandbox.accounts()[0]
        with ProviderClient(sandbox.base_url, sandbox.config.secret_key) as client:
            request = PayoutRequest(50_000, account["bank_code"], account["account_number"], "H1")
            send_payout(engine, client, request, now=start)
        sandbox.http.post(
            "/_sandbox/transfers/H1/complete",
            json={"status": "failed", "failure_reason": "bank\x00 offline"},
        ).raise_for_status()
        settings = settings_for(database_url, sandbox)

        async def one_pass() -> int:
            async with AsyncProviderClient(
                sandbox.base_url, sandbox.config.secret_key, max_retries=0
            ) as client:
                later = start + dt.timedelta(seconds=120)
                summary = await run_pass(engine, client, settings, now=later)
                return summary.confirmed

        confirmed = asyncio.run(one_pass())
    with read_session(engine) as session:
        transfer = find_transfer(session, "H1")
        assert transfer is not None
        row = (transfer.status, transfer.confirmed, transfer.failure_reason)
    assert confirmed == 1
    assert row == ("failed", True, "bank offline")
