"""Every metric the shipped dashboard and alert rules name is one payrecon exports, read from
the real `/metrics` of `serve`, `reconcile run` and `relay run` after each did some work."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from sqlalchemy import Engine

from tests.integration.reconcile.helpers import running_sandbox
from tests.integration.statements.ledger_rows import SAMPLE
from tests.support import relay as support
from tests.support.cli import run_cli
from tests.support.processes import PAYRECON, payrecon_env, serving, stop
from tests.support.promql import exported_names, expression_names
from tests.support.servers import free_port
from tests.support.webhooks import encode, success_body

ROOT = Path(__file__).resolve().parents[3]


def shipped_expressions() -> list[str]:
    """Every PromQL expression of deploy/grafana/payrecon.json and deploy/prometheus/alerts.yml."""
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "payrecon.json").read_text())
    rules = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())
    return [
        *(t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])),
        *(rule["expr"] for group in rules["groups"] for rule in group["rules"]),
    ]


def _scrape_when(url: str, ready: Callable[[str], bool], *, limit: float = 60.0) -> str:
    """The first scrape of `url` that `ready` accepts (polled every 0.2 s, at most `limit` s)."""
    deadline = time.monotonic() + limit
    text = ""
    while time.monotonic() < deadline:
        try:
            text = httpx.get(url, timeout=10).text
        except httpx.TransportError:
            text = ""
        if ready(text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"{url} never showed what was awaited; last scrape:\n{text[-2000:]}")


# worker_metrics(args, env, ready) -> (the first scrape `ready` accepts, the command's log).
StartWorker = Callable[[list[str], dict[str, str], Callable[[str], bool]], tuple[str, Path]]


@pytest.fixture
def worker_metrics(tmp_path: Path) -> Iterator[StartWorker]:
    """Start a worker command with --metrics-port; its first scrape that `ready` accepts and
    the file of its log (kept beside the test, and shown when no scrape is accepted)."""
    started: list[subprocess.Popen[bytes]] = []

    def run(args: list[str], env: dict[str, str], ready: Callable[[str], bool]) -> tuple[str, Path]:
        port = free_port()
        log = tmp_path / f"{'-'.join(args)}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [*PAYRECON, *args, "--metrics-port", str(port)],
                env=env,
                stdout=output,
                stderr=output,
            )
        started.append(process)
        try:
            return _scrape_when(f"http://127.0.0.1:{port}/metrics", ready), log
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}\n{' '.join(args)} logged:\n{log.read_text()[-4000:]}"
            ) from None

    yield run
    for process in started:
        stop(process)


def _last_pass(scrape: str) -> float | None:
    """The reconciler's last-pass gauge in `scrape` (None when absent)."""
    for line in scrape.splitlines():
        if line.startswith("payrecon_reconcile_last_pass_timestamp_seconds "):
            return float(line.split()[1])
    return None


def _pass_recorded(scrape: str) -> bool:
    """A pass completed and its end reached the ledger. A scrape reads the ledger's gauges
    before the process's counters, so a pass that ends between the two shows its counter with
    the gauge still 0: such a scrape is not yet the one awaited."""
    completed = 'payrecon_reconcile_passes_total{outcome="completed"}' in scrape
    return completed and bool(_last_pass(scrape))


def test_dashboard_and_rules_name_only_exported_metrics(
    database_url: str,
    engine: Engine,
    worker_metrics: StartWorker,
) -> None:
    """The union of the three processes' scrapes, after a webhook, a relay attempt and a
    reconcile pass, holds every metric name the dashboard and the rules use."""
    env = payrecon_env(
        database_url=database_url,
        relay_keys=support.RELAY_KEYS,
        webhook_secret="s3cret-header-0123456789",
    )
    consumer = support.Consumer()
    with support.serving(consumer) as consumer_url, running_sandbox(complete_after=0) as box:
        support.add_endpoint(engine, consumer_url + "/hook")
        support.emit_events(engine, support.add_transfers(engine, 2))
        imported = run_cli(database_url, "statement", "import", str(SAMPLE), "--mapping", "sandbox")
        assert imported.exit_code == 0, imported.output
        with serving(env) as base:
            answer = httpx.post(
                f"{base}/webhook",
                content=encode(success_body("TRF-metrics-1")),
                headers={
                    "Content-Type": "application/json",
                    "X-Webhook-Secret": "s3cret-header-0123456789",
                },
                timeout=10,
            )
            assert answer.status_code == 200
            refused = httpx.post(f"{base}/webhook", content=b"{}", timeout=10)
            assert refused.status_code == 401
            served = _scrape_when(f"{base}/metrics", lambda t: "payrecon_ready{" in t)
        relayed, _relay_log = worker_metrics(
            ["relay", "run"], env, lambda t: 'payrecon_relay_worker_attempts_total{endpoint="' in t
        )
        reconcile_env = {
            **env,
            "PAYRECON_PROVIDER_BASE_URL": box.base_url,
            "PAYRECON_PROVIDER_SECRET_KEY": box.config.secret_key,
            "PAYRECON_POLL_INTERVAL": "1",
        }
        reconciled, reconcile_log = worker_metrics(
            ["reconcile", "run"], reconcile_env, _pass_recorded
        )
    exported = exported_names(served) | exported_names(relayed) | exported_names(reconciled)
    used = set().union(*(expression_names(expr) for expr in shipped_expressions()))
    assert used, "no expression found"
    assert used - exported == set()
    # The ledger's gauges are on every process; each process adds its own.
    for scrape in (served, relayed, reconciled):
        names = exported_names(scrape)
        assert {"payrecon_findings_open", "payrecon_reconcile_due", "payrecon_ledger_up"} <= names
    assert "payrecon_webhook_deliveries_total" in exported_names(served)
    assert "payrecon_reconcile_pass_seconds_bucket" in exported_names(reconciled)
    assert "payrecon_relay_attempt_seconds_bucket" in exported_names(relayed)
    # Every pass so far completed (a pass that failed would be counted under its error).
    failed = [
        line
        for line in reconciled.splitlines()
        if line.startswith("payrecon_reconcile_passes_total{") and '"completed"' not in line
    ]
    assert not failed, (failed, reconcile_log.read_text()[-4000:])
    # The reconciler's pass reached the ledger: every process shows a recent last pass.
    last = _last_pass(reconciled)
    assert last is not None and last > time.time() - 120
