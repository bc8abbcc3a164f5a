"""Killing `payrecon transfer send` at its two dangerous instants never pays twice."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import subprocess
import sys

import pytest
from sqlalchemy import Engine

from ledger.db import read_session
from ledger.queries import find_transfer
from ledger.types import utcnow
from provider.client import AsyncProviderClient
from reconcile.poller import run_pass
from tests.integration.reconcile.helpers import (
    Sandbox,
    open_findings,
    running_sandbox,
    settings_for,
)
from tests.support.apps import sandbox_settings
from tests.support.payouts import send_options


def _send_killed(database_url: str, sandbox: Sandbox, failpoint: str, reference: str) -> int:
    account = sandbox.accounts()[0]
    env = {**os.environ, **sandbox_settings(database_url, sandbox, PAYRECON_FAILPOINT=failpoint)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "payrecon",
            "transfer",
            "send",
            *send_options(account, reference, 300_000),
        ],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.returncode


def _passes(engine: Engine, sandbox: Sandbox, database_url: str, times: list[dt.datetime]) -> None:
    settings = settings_for(database_url, sandbox, check_backoff=30, check_backoff_max=60)

    async def go() -> None:
        async with AsyncProviderClient(sandbox.base_url, sandbox.config.secret_key) as client:
            for now in times:
                await run_pass(engine, client, settings, now=now)

    asyncio.run(go())


@pytest.mark.slow
def test_killed_after_initiate_is_resolved_by_the_next_pass(
    database_url: str, engine: Engine
) -> None:
    """Killed after the provider accepted: one transfer at the provider, found and confirmed."""
    with running_sandbox(complete_after=0) as sandbox:
        assert _send_killed(database_url, sandbox, "after_initiate", "K-2") == 137
        with read_session(engine) as session:
            assert find_transfer(session, "K-2").initiation == "intent"  # type: ignore[union-attr]
        assert len(sandbox.transfers()) == 1
        _passes(engine, sandbox, database_url, [utcnow() + dt.timedelta(seconds=61)])
        truth = sandbox.transfers()
    assert len(truth) == 1
    with read_session(engine) as session:
        row = find_transfer(session, "K-2")
    assert row is not None
    assert (row.initiation, row.status, row.confirmed) == ("accepted", "successful", True)
    assert row.provider_reference == truth[0]["reference"]


@pytest.mark.slow
def test_killed_after_intent_is_flagged_unknown_and_never_paid(
    database_url: str, engine: Engine
) -> None:
    """Killed before the provider call: nothing paid, and the passes flag unknown_to_provider."""
    with running_sandbox(complete_after=0) as sandbox:
        assert _send_killed(database_url, sandbox, "after_intent", "K-1") == 137
        start = utcnow()
        _passes(
            engine,
            sandbox,
            database_url,
            [start + dt.timedelta(seconds=61 + 61 * n) for n in range(4)],
        )
        assert sandbox.transfers() == []
    assert open_findings(engine) == {("K-1", "unknown_to_provider")}
    with read_session(engine) as session:
        row = find_transfer(session, "K-1")
    assert row is not None
    assert (row.initiation, row.confirmed) == ("intent", False)
