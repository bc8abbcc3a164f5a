"""Hundreds of payouts through a faulty sandbox: every transfer ends confirmed or flagged."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import pytest
from sqlalchemy import Engine, select

from ledger.db import read_session, write_session
from ledger.models import Transfer
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import utcnow
from payments.payouts import PayoutRequest, send_payout
from provider.client import AsyncProviderClient, ProviderClient
from reconcile.poller import PassSummary, run_pass
from tests.integration.reconcile.helpers import (
    Sandbox,
    apply_webhook,
    open_findings,
    running_sandbox,
    settings_for,
)

COUNT = 500
FAULTS = {
    "seed": 11,
    "stuck_pending": 0.04,
    "fail_rate": 0.1,
    "fee_drift": 0.05,
    "tamper_amount": 0.05,
    "tamper_fee": 0.05,
    "webhook_drop": 0.2,
    "webhook_duplicate": 0.1,
}
LOOKUP_FAULTS = {"lookup_5xx": 0.2, "lookup_timeout": 0.1, "lookup_timeout_seconds": 2.0}


def _pay_all(engine: Engine, sandbox: Sandbox, now: dt.datetime) -> None:
    accounts = sandbox.accounts()
    with ProviderClient(sandbox.base_url, sandbox.config.secret_key) as client:
        for i in range(COUNT):
            account = accounts[i % len(accounts)]
            request = PayoutRequest(
                10_000 + i * 1_337, account["bank_code"], account["account_number"], f"P{i:04d}"
            )
            send_payout(engine, client, request, now=now)


def _wait_settled(sandbox: Sandbox) -> list[dict[str, object]]:
    deadline = time.monotonic() + 30
    while True:
        truth = sandbox.transfers()
        unsettled = [
            t for t in truth if t["status"] == "pending" and "stuck_pending" not in t["faults"]
        ]
        if not unsettled or time.monotonic() > deadline:
            return truth
        time.sleep(0.1)


def _expected(truth: list[dict[str, object]], forged: set[str]) -> set[tuple[str, str]]:
    expected: set[tuple[str, str]] = set()
    for t in truth:
        ref, faults = str(t["merchant_reference"]), set(t["faults"])  # type: ignore[call-overload]
        seen = "webhook_drop" not in faults and t["status"] == "successful"
        if t["status"] == "pending":
            expected.add((ref, "stale_pending"))
        if seen and "tamper_amount" in faults:
            expected.add((ref, "amount_mismatch"))
        settled = t["status"] != "pending"  # fees drift at completion
        if (settled and "fee_drift" in faults) or (seen and "tamper_fee" in faults):
            expected.add((ref, "fee_mismatch"))
        if ref in forged:
            expected.add((ref, "status_conflict"))
    return expected


@pytest.mark.slow
def test_every_transfer_ends_confirmed_or_flagged_with_exactly_the_injected_findings(
    database_url: str, engine: Engine
) -> None:
    """500 payouts with faults: after enough passes only the injected mismatches are open."""
    start = utcnow()
    with running_sandbox(seed=11) as sandbox:
        sandbox.faults(**FAULTS)
        _pay_all(engine, sandbox, start)
        truth = _wait_settled(sandbox)
        assert len(truth) == COUNT
        forged: set[str] = set()
        for t in truth:
            faults = set(t["faults"])  # type: ignore[call-overload]
            ref = str(t["merchant_reference"])
            if t["status"] == "pending" or "webhook_drop" in faults:
                continue
            if len(forged) < 3 and t["status"] == "successful" and not faults:
                forged.add(ref)  # a forged contradicting webhook: must become status_conflict
                apply_webhook(
                    engine,
                    ref,
                    status="failed",
                    amount=None,
                    fee=None,
                    failure_reason="forged",
                    now=start,
                )
                continue
            apply_webhook(
                engine,
                ref,
                status=str(t["status"]),
                amount=t["webhook_amount"],  # type: ignore[arg-type]
                fee=t["webhook_fee"],
                failure_reason=t["failure_reason"],  # type: ignore[arg-type]
                now=start,
            )
        with write_session(engine) as session:
            for i in range(3):  # registered elsewhere, never heard of by the provider
                register_expected(session, ExpectedTransfer(f"GHOST{i}", 5_000, 100), now=start)
        sandbox.faults(**FAULTS, **LOOKUP_FAULTS)
        settings = settings_for(
            database_url, sandbox, check_backoff=30, check_backoff_max=120, provider_timeout=0.5
        )
        summaries: list[PassSummary] = []

        async def passes() -> None:
            async with AsyncProviderClient(
                sandbox.base_url, sandbox.config.secret_key, timeout=0.5, max_retries=0
            ) as client:
                for n in range(40):
                    now = start + dt.timedelta(seconds=61 + 130 * n)
                    summaries.append(await run_pass(engine, client, settings, now=now))

        asyncio.run(passes())
    expected = _expected(truth, forged) | {(f"GHOST{i}", "unknown_to_provider") for i in range(3)}
    found = open_findings(engine)
    assert found == expected
    assert sum(s.transient_errors for s in summaries) > 0  # the lookup faults really fired
    flagged = {ref for ref, _ in found}
    with read_session(engine) as session:
        for transfer in session.execute(select(Transfer)).scalars():
            assert transfer.confirmed or transfer.reference in flagged, transfer.reference
            if transfer.confirmed:
                assert transfer.status == transfer.provider_status
