"""Two `reconcile run` processes on one PostgreSQL ledger: each finding and alert once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select

from ledger.db import create_db_engine, read_session, write_session
from ledger.models import Alert, Finding, Transfer
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import utcnow
from provider.client import ProviderClient
from tests.integration.reconcile.helpers import AlertInbox, running_sandbox
from tests.support.servers import running_server

COUNT = 120


@pytest.mark.slow
@pytest.mark.postgres
def test_two_reconcilers_raise_and_alert_each_finding_once(postgres_url: str) -> None:
    """Seeded amount/fee mismatches and webhook rechecks: one finding, one alert each."""
    engine = create_db_engine(postgres_url)
    inbox = AlertInbox()
    with (
        running_sandbox(complete_after=0.2, seed=3) as sandbox,
        running_server(inbox.app()) as alert_base,
    ):
        sandbox.faults(seed=3, fee_drift=0.2, stuck_pending=0.1, lookup_5xx=0.2)
        account = sandbox.accounts()[0]
        with (
            ProviderClient(sandbox.base_url, sandbox.config.secret_key) as client,
            write_session(engine) as session,
        ):
            for i in range(COUNT):
                answer = client.initiate_transfer(
                    amount=70_000 + i,
                    bank_code=account["bank_code"],
                    account_number=account["account_number"],
                    reference=f"M{i}",
                )
                wrong = 1 if i % 10 == 0 else 0  # every tenth was expected for a different amount
                register_expected(
                    session,
                    ExpectedTransfer(f"M{i}", answer.amount + wrong, answer.fee, answer.reference),
                    now=utcnow(),
                )
        env = {k: v for k, v in os.environ.items() if not k.startswith("PAYRECON_")}
        env.update(
            {
                "PAYRECON_DATABASE_URL": postgres_url,
                "PAYRECON_PROVIDER_BASE_URL": sandbox.base_url,
                "PAYRECON_PROVIDER_SECRET_KEY": sandbox.config.secret_key,
                "PAYRECON_POLL_INTERVAL": "1",
                "PAYRECON_CHECK_BACKOFF": "0",
                "PAYRECON_CHECK_BACKOFF_MAX": "0",
                "PAYRECON_STALE_AFTER": "100000",
                "PAYRECON_PROVIDER_CONCURRENCY": "4",
                "PAYRECON_ALERT_URLS": alert_base.replace("http", "json") + "/hook",
                "PAYRECON_ALERT_ALLOW_INSECURE": "1",
                # One message per finding here (grouping: test_alert_groups.py).
                "PAYRECON_ALERT_GROUP_AFTER": "100000",
            }
        )
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "payrecon", "reconcile", "run"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            settled = sum(1 for t in sandbox.transfers() if "stuck_pending" not in t["faults"])
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with read_session(engine) as session:
                    done = session.execute(
                        select(func.count()).select_from(Transfer).where(Transfer.confirmed)
                    ).scalar_one()  # type: ignore[arg-type]
                if done == settled:
                    break
                time.sleep(0.2)
            time.sleep(3)  # more passes each, re-checking the stuck ones every time
            stderrs = []
            for process in processes:
                process.send_signal(signal.SIGTERM)
            for process in processes:
                stderrs.append(process.communicate(timeout=60)[1])
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
        truth = {t["merchant_reference"]: t for t in sandbox.transfers()}
    assert [p.returncode for p in processes] == [0, 0], stderrs
    assert all("reconcile_pass" in err for err in stderrs)  # both really worked
    with read_session(engine) as session:
        findings = session.execute(
            select(Finding, Transfer)
            .join(Transfer, Transfer.id == Finding.subject_id)
            .where(Finding.subject == "transfer")
        ).all()  # type: ignore[arg-type]
        per_finding = dict(
            session.execute(select(Alert.finding_id, func.count()).group_by(Alert.finding_id)).all()
        )
        confirmed = session.execute(
            select(func.count()).select_from(Transfer).where(Transfer.confirmed)
        ).scalar_one()
    engine.dispose()
    expected = {(f"M{i}", "amount_mismatch") for i in range(0, COUNT, 10)}
    expected |= {
        (ref, "fee_mismatch")
        for ref, t in truth.items()
        if "fee_drift" in t["faults"] and t["status"] != "pending"
    }
    assert {(t.reference, f.kind) for f, t in findings} == expected
    assert all(per_finding.get(f.id) == 1 for f, _ in findings)
    assert len(inbox.received) == len(findings)
    assert confirmed == sum(1 for t in truth.values() if t["status"] != "pending")
