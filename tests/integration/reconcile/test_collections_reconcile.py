"""Collections against the real sandbox over HTTP: each finding produced on purpose and
nothing else; lookup faults never make a false finding; a killed create is resolved by lookup."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import subprocess
import sys
import time
from typing import Any

import pytest
from sqlalchemy import Engine, select

from ledger.collections import ExpectedCollection, find_collection, register_expected_collection
from ledger.db import read_session, write_session
from ledger.events.types import RelayEventType
from ledger.models import Alert, Collection, Finding, RelayEvent
from ledger.types import utcnow
from payments.collections import CollectionRequest, create_collection
from provider.client import AsyncProviderClient, ProviderClient
from reconcile.poller import PassSummary, run_pass
from reconcile.reports.findings import list_findings
from tests.integration.reconcile.helpers import Sandbox, running_sandbox, settings_for
from tests.support.apps import sandbox_settings

AMOUNT = 500_000


def collection_findings(engine: Engine) -> set[tuple[str, str]]:
    """Every open finding on a collection as (merchant reference, kind)."""
    with read_session(engine) as session:
        rows = session.execute(
            select(Collection.reference, Finding.kind)
            .join(Collection, Collection.id == Finding.subject_id)  # type: ignore[arg-type]
            .where(Finding.subject == "collection")  # type: ignore[arg-type]
            .where(Finding.resolved_at.is_(None))  # type: ignore[union-attr]
        ).all()
    return {(r[0], r[1]) for r in rows}


def _create(engine: Engine, sandbox: Sandbox, reference: str, amount: int = AMOUNT) -> None:
    with ProviderClient(sandbox.base_url, sandbox.config.secret_key) as client:
        create_collection(
            engine, client, CollectionRequest(reference=reference, amount=amount), now=utcnow()
        )


def _pay(sandbox: Sandbox, reference: str, amount: int) -> None:
    sandbox.http.post(
        f"/_sandbox/collections/{reference}/pay", json={"amount": amount}
    ).raise_for_status()


def _passes(
    engine: Engine, sandbox: Sandbox, database_url: str, times: list[dt.datetime], **settings: Any
) -> list[PassSummary]:
    config = settings_for(database_url, sandbox, check_backoff=0, collection_grace=600, **settings)
    summaries: list[PassSummary] = []

    async def go() -> None:
        async with AsyncProviderClient(
            sandbox.base_url, sandbox.config.secret_key, timeout=0.5, max_retries=0
        ) as client:
            for now in times:
                summaries.append(await run_pass(engine, client, config, now=now))

    asyncio.run(go())
    return summaries


def _row(engine: Engine, reference: str) -> Collection:
    with read_session(engine) as session:
        found = find_collection(session, reference)
        assert found is not None
        return found


def test_each_finding_on_purpose_and_nothing_else(database_url: str, engine: Engine) -> None:
    """Exact, over, under, late, fee drift, stuck, unpaid-expired and unknown collections end
    with exactly their own finding (none for exact and for unpaid-expired), each alerted once
    and each final status relayed as `collection.confirmed`; `findings list` names them."""
    with running_sandbox(collection_ttl=2.0) as sandbox:
        for reference in ("EXACT", "OVER", "UNDER", "NEVER"):
            _create(engine, sandbox, reference)
        sandbox.faults(stuck_pending=1.0)
        _create(engine, sandbox, "STUCK")
        sandbox.faults(collection_late=1.0, collection_late_seconds=30)
        _create(engine, sandbox, "LATE")
        _pay(sandbox, "LATE", AMOUNT)
        sandbox.faults(fee_drift=1.0)
        _create(engine, sandbox, "FEE")
        _pay(sandbox, "FEE", AMOUNT)
        sandbox.faults()
        _pay(sandbox, "EXACT", AMOUNT)
        _pay(sandbox, "OVER", AMOUNT + 25_000)
        _pay(sandbox, "UNDER", AMOUNT - 25_000)
        with write_session(engine) as session:
            register_expected_collection(session, ExpectedCollection("GHOST", 1_000), now=utcnow())
        time.sleep(2.5)  # NEVER (and STUCK's own clock) pass their expiry at the sandbox
        late = utcnow() + dt.timedelta(seconds=700)
        summaries = _passes(
            engine,
            sandbox,
            database_url,
            [late + dt.timedelta(seconds=n) for n in range(4)],
        )
    assert collection_findings(engine) == {
        ("OVER", "overpaid"),
        ("UNDER", "underpaid"),
        ("LATE", "paid_after_expiry"),
        ("FEE", "fee_mismatch"),
        ("STUCK", "stale_pending"),
        ("GHOST", "unknown_to_provider"),
    }
    exact, never, under = _row(engine, "EXACT"), _row(engine, "NEVER"), _row(engine, "UNDER")
    assert (exact.status, exact.confirmed, exact.amount_paid) == ("successful", True, AMOUNT)
    assert exact.next_check_at is None and exact.final_check_done
    assert (never.status, never.failure_reason) == ("failed", "Collection expired")
    assert (under.status, under.amount_paid) == ("failed", AMOUNT - 25_000)
    assert _row(engine, "OVER").amount_paid == AMOUNT + 25_000
    assert summaries[0].collections.checked == 8
    assert summaries[0].collections.confirmed == 6
    assert sum(s.alerts_sent for s in summaries) == 6  # one alert per finding, never again
    with read_session(engine) as session:
        titles = session.execute(select(Alert.title)).scalars().all()
    assert "payrecon: overpaid on collection OVER" in titles
    with read_session(engine) as session:
        confirmed = session.execute(
            select(RelayEvent.reference).where(
                RelayEvent.type == RelayEventType.COLLECTION_CONFIRMED.value  # type: ignore[arg-type]
            )
        ).scalars()
        assert sorted(confirmed) == ["EXACT", "FEE", "LATE", "NEVER", "OVER", "UNDER"]
        opened = session.execute(
            select(RelayEvent).where(
                RelayEvent.type == RelayEventType.FINDING_OPENED.value,  # type: ignore[arg-type]
                RelayEvent.reference == "OVER",  # type: ignore[arg-type]
            )
        ).scalar_one()
        listed = {item["reference"]: item for item in list_findings(session)}
    assert (opened.subject, opened.sequence) == ("collection", 2)
    assert (listed["OVER"]["subject"], listed["OVER"]["kind"]) == ("collection", "overpaid")
    assert '"subject":"collection"' in opened.body and '"kind":"overpaid"' in opened.body


def test_a_garbled_answer_is_unverifiable_until_a_good_one(
    database_url: str, engine: Engine
) -> None:
    """An answer no one can interpret opens `unverifiable`, never a crash; the next good
    answer resolves it and confirms the payment."""
    with running_sandbox() as sandbox:
        _create(engine, sandbox, "ODD")
        _pay(sandbox, "ODD", AMOUNT)
        sandbox.faults(lookup_garbage=1.0)
        start = utcnow() + dt.timedelta(seconds=61)
        _passes(engine, sandbox, database_url, [start])
        garbled = collection_findings(engine)
        sandbox.faults()
        _passes(engine, sandbox, database_url, [start + dt.timedelta(seconds=1)])
    assert garbled == {("ODD", "unverifiable")}
    assert collection_findings(engine) == set()
    assert _row(engine, "ODD").status == "successful"


COUNT = 300
LOOKUP_FAULTS = {
    "seed": 5,
    "lookup_5xx": 0.2,
    "lookup_timeout": 0.1,
    "lookup_timeout_seconds": 2.0,
    "lookup_429": 0.1,
    "lookup_retry_after": 1,
}


@pytest.mark.slow
def test_lookup_faults_never_make_a_false_finding(database_url: str, engine: Engine) -> None:
    """300 paid collections looked up through 5xx, timeouts and 429s: each ends confirmed
    successful, with no finding at all."""
    with running_sandbox() as sandbox:
        with ProviderClient(sandbox.base_url, sandbox.config.secret_key) as client:
            for i in range(COUNT):
                request = CollectionRequest(reference=f"C{i:03d}", amount=10_000 + i * 7)
                create_collection(engine, client, request, now=utcnow())
        for i in range(COUNT):
            _pay(sandbox, f"C{i:03d}", 10_000 + i * 7)
        sandbox.faults(**LOOKUP_FAULTS)
        start = utcnow() + dt.timedelta(seconds=61)
        summaries = _passes(
            engine,
            sandbox,
            database_url,
            [start + dt.timedelta(seconds=5 * n) for n in range(25)],
            provider_timeout=0.5,
        )
    assert sum(s.collections.transient_errors for s in summaries) > 0  # the faults fired
    assert collection_findings(engine) == set()
    with read_session(engine) as session:
        rows = session.execute(select(Collection)).scalars().all()
        assert len(rows) == COUNT
        unsettled = [r.reference for r in rows if not (r.confirmed and r.status == "successful")]
    assert unsettled == []


def _create_killed(database_url: str, sandbox: Sandbox, failpoint: str, reference: str) -> int:
    env = {**os.environ, **sandbox_settings(database_url, sandbox, PAYRECON_FAILPOINT=failpoint)}
    command = ["collection", "create", "--amount", "120000", "--reference", reference]
    done = subprocess.run(
        [sys.executable, "-m", "payrecon", *command],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.returncode


def _at_sandbox(sandbox: Sandbox, reference: str) -> int:
    answer = sandbox.http.get(
        f"/v1/collection/{reference}",
        headers={"authorization": f"Bearer {sandbox.config.secret_key}"},
    )
    return 1 if answer.status_code == 200 else 0


@pytest.mark.slow
def test_killed_between_intent_and_create_never_creates_and_is_resolved(
    database_url: str, engine: Engine
) -> None:
    """Killed after the intent: nothing at the provider, no second creation, and the next
    pass flags it `unknown_to_provider` (with a not-found limit of 1)."""
    with running_sandbox() as sandbox:
        assert _create_killed(database_url, sandbox, "collection_after_intent", "K-1") == 137
        assert _row(engine, "K-1").initiation == "intent"
        _passes(
            engine,
            sandbox,
            database_url,
            [utcnow() + dt.timedelta(seconds=61)],
            not_found_limit=1,
        )
        created = _at_sandbox(sandbox, "K-1")
    assert created == 0
    assert collection_findings(engine) == {("K-1", "unknown_to_provider")}


@pytest.mark.slow
def test_killed_after_create_is_found_by_the_next_pass(database_url: str, engine: Engine) -> None:
    """Killed after the provider created it: one collection there, found by lookup."""
    with running_sandbox() as sandbox:
        assert _create_killed(database_url, sandbox, "collection_after_create", "K-2") == 137
        assert _row(engine, "K-2").initiation == "intent"
        _passes(engine, sandbox, database_url, [utcnow() + dt.timedelta(seconds=61)])
        created = _at_sandbox(sandbox, "K-2")
    row = _row(engine, "K-2")
    assert created == 1
    assert (row.initiation, row.status) == ("accepted", "pending")
    assert row.provider_reference is not None and row.provider_reference.startswith("COL_")
    assert collection_findings(engine) == set()
