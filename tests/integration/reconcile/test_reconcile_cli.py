"""`payrecon reconcile once|run` as a user runs it: JSON summary, exit codes, leases, signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from ledger.db import read_session, write_session
from ledger.lease import LAST_PASS
from ledger.models import Alert, Lease
from ledger.queries import ExpectedTransfer, register_expected
from ledger.types import utcnow
from provider.client import ProviderClient
from tests.integration.reconcile.helpers import Sandbox, running_sandbox
from tests.support.apps import cli_env, sandbox_settings


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """A sandbox completing transfers at once."""
    with running_sandbox(complete_after=0) as box:
        yield box


def _env(database_url: str, sandbox: Sandbox | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYRECON_")}
    if sandbox is None:
        env.update(cli_env(database_url, **extra))
    else:
        env.update(sandbox_settings(database_url, sandbox, **extra))
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "payrecon", "reconcile", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _seed(engine: Engine, sandbox: Sandbox, count: int, *, wrong_amount: int = 0) -> None:
    account = sandbox.accounts()[0]
    with (
        ProviderClient(sandbox.base_url, sandbox.config.secret_key) as client,
        write_session(engine) as session,
    ):
        for i in range(count):
            answer = client.initiate_transfer(
                amount=50_000 + i,
                bank_code=account["bank_code"],
                account_number=account["account_number"],
                reference=f"S{i}",
            )
            amount = answer.amount + (1 if i < wrong_amount else 0)
            register_expected(
                session,
                ExpectedTransfer(f"S{i}", amount, answer.fee, answer.reference),
                now=utcnow(),
            )


def test_once_json_prints_one_object_and_exits_0(
    database_url: str, engine: Engine, sandbox: Sandbox
) -> None:
    """`once --json` prints one JSON object with the stable keys."""
    _seed(engine, sandbox, 5)
    time.sleep(0.3)
    done = _run(_env(database_url, sandbox), "once", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    for key in (
        "checked",
        "confirmed",
        "pending",
        "findings_raised",
        "findings_resolved",
        "provider_errors",
    ):
        assert key in summary
    assert summary["checked"] == 5
    assert summary["confirmed"] == 5


def test_fail_on_findings_exits_3(database_url: str, engine: Engine, sandbox: Sandbox) -> None:
    """With --fail-on-findings a pass that raised findings exits 3; a clean one exits 0."""
    _seed(engine, sandbox, 3, wrong_amount=1)
    time.sleep(0.3)
    first = _run(_env(database_url, sandbox), "once", "--json", "--fail-on-findings")
    assert first.returncode == 3
    assert json.loads(first.stdout)["raised_by_kind"] == {"amount_mismatch": 1}
    second = _run(_env(database_url, sandbox), "once", "--fail-on-findings")
    assert second.returncode == 0, second.stderr


def test_refused_key_exits_1_with_one_line_and_one_alert(
    database_url: str, engine: Engine, sandbox: Sandbox
) -> None:
    """A wrong key: exit 1, one line naming the key, one alert however many passes."""
    _seed(engine, sandbox, 2)
    env = _env(database_url, sandbox, PAYRECON_PROVIDER_SECRET_KEY="sk_test_wrongwrongwrong")
    for _ in range(2):
        done = _run(env, "once")
        assert done.returncode == 1
        assert "payrecon: the provider refused the secret key" in done.stderr
    with read_session(engine) as session:
        alerts = session.execute(select(func.count()).select_from(Alert)).scalar_one()
    assert alerts == 1


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"PAYRECON_PROVIDER_BASE_URL": ""}, "PAYRECON_PROVIDER_BASE_URL"),
        ({"PAYRECON_ALERT_URLS": "json://alerts.example.com/x"}, "PAYRECON_ALERT_URLS"),
        ({"PAYRECON_CHECK_BACKOFF": "-1"}, "PAYRECON_CHECK_BACKOFF"),
    ],
)
def test_configuration_errors_exit_2(
    database_url: str, sandbox: Sandbox, extra: dict[str, str], needle: str
) -> None:
    """Missing or refused settings exit 2 with one line naming the variable."""
    done = _run(_env(database_url, sandbox, **extra), "once")
    assert done.returncode == 2
    assert needle in done.stderr


def test_unreachable_provider_exits_1(database_url: str, engine: Engine, sandbox: Sandbox) -> None:
    """When every lookup fails transiently the pass exits 1."""
    _seed(engine, sandbox, 2)
    env = _env(database_url, sandbox, PAYRECON_PROVIDER_BASE_URL="http://127.0.0.1:9")
    done = _run(env, "once", "--json")
    assert done.returncode == 1
    assert "unreachable" in done.stderr


def test_second_sqlite_runner_exits_with_a_clear_message(tmp_path: Any, sandbox: Sandbox) -> None:
    """On SQLite a second reconciler meets the runner lease and exits 1 saying so."""
    from ledger.db import create_db_engine
    from ledger.migrate import upgrade

    url = f"sqlite:///{tmp_path}/lease.db"
    upgrade(url)
    engine = create_db_engine(url)
    with write_session(engine) as session:
        session.add(
            Lease(
                name="reconciler", owner="other-host:1:abc", expires_at=utcnow().replace(year=2099)
            )
        )
    engine.dispose()
    done = _run(_env(url, sandbox), "once")
    assert done.returncode == 1
    assert "another reconciler (other-host:1:abc) holds the ledger lease" in done.stderr


def test_run_stops_cleanly_on_sigterm(database_url: str, engine: Engine, sandbox: Sandbox) -> None:
    """`reconcile run` keeps passing until SIGTERM, then exits 0 and gives its lease back."""
    _seed(engine, sandbox, 3)
    env = _env(database_url, sandbox, PAYRECON_POLL_INTERVAL="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "payrecon", "reconcile", "run"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with read_session(engine) as session:
                if _all_confirmed(session):
                    break
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert "reconciler_stopped" in stderr
    with read_session(engine) as session:
        assert _all_confirmed(session)
        # The runner lease is handed back; the last-pass row (ledger.lease.LAST_PASS) stays.
        leases = session.execute(select(Lease)).scalars().all()
        assert [lease.name for lease in leases] == [LAST_PASS]


def _all_confirmed(session: Any) -> bool:
    from ledger.models import Transfer

    rows = session.execute(select(Transfer.confirmed)).scalars().all()
    return bool(rows) and all(rows)
