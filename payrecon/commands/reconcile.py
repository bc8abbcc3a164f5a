"""`payrecon reconcile once|run`: confirm transfers against the provider, flag, alert."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from dataclasses import dataclass
from typing import NoReturn

import click
from rich.console import Console
from rich.table import Table
from sqlalchemy import Engine

from ledger.db import write_session
from ledger.errors import DatabaseUnavailableError
from ledger.lease import record_last_pass
from ledger.types import utcnow
from payrecon import heap
from payrecon.clients import make_async_client
from payrecon.context import EXIT_FINDINGS, EXIT_RUNTIME, EXIT_USAGE, app_context, fail
from payrecon.errors import ConfigError
from payrecon.monitoring import metrics_port_option, monitored
from payrecon.settings import Settings
from payrecon.wiring import alert_rules, make_alert_sink
from provider.client import AsyncProviderClient
from reconcile.alert_text import job_failed_alert
from reconcile.alerts import AlertSink, send_keyed_alert
from reconcile.errors import LeaseHeldError, ProviderKeyRefusedError, ProviderMisconfiguredError
from reconcile.lease import new_owner, release_runner_lease
from reconcile.metrics import ReconcilerMetrics, create_reconciler_metrics
from reconcile.poller import PassSummary, run_pass
from reconcile.scheduler import StopFlag, run_every


@click.group()
def reconcile() -> None:
    """Confirm transfers against the provider's API and raise findings."""


@dataclass(frozen=True)
class _Reconciler:
    """What every pass of one command uses: built once, before the ledger is touched."""

    settings: Settings
    engine: Engine
    client: AsyncProviderClient
    sink: AlertSink | None

    metrics: ReconcilerMetrics | None = None

    async def one_pass(self, owner: str, *, keep: bool) -> PassSummary:
        started = time.perf_counter()
        try:
            summary = await run_pass(
                self.engine,
                self.client,
                self.settings,
                owner=owner,
                sink=self.sink,
                keep_runner_lease=keep,
            )
        except Exception as exc:
            if self.metrics is not None:
                self.metrics.failed(exc)
            raise
        # Every process's /metrics shows when the last pass ended (ledger.lease.LAST_PASS).
        await asyncio.to_thread(_record_last_pass, self.engine, owner)
        if self.metrics is not None:
            self.metrics.passed(summary, time.perf_counter() - started)
        return summary


def _record_last_pass(engine: Engine, owner: str) -> None:
    with write_session(engine) as session:
        record_last_pass(session, owner=owner, now=utcnow())


def _prepare(ctx: click.Context) -> _Reconciler:
    app = app_context(ctx)
    settings = app.settings()
    try:
        # Missing settings fail here, before the ledger is touched.
        client = make_async_client(settings)
        sink = make_alert_sink(settings)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    return _Reconciler(settings, app.engine(), client, sink)


async def _once(reconciler: _Reconciler) -> PassSummary:
    async with reconciler.client:
        return await reconciler.one_pass(new_owner(), keep=False)


def _fail_known(exc: Exception) -> NoReturn:
    if isinstance(exc, ProviderKeyRefusedError | ProviderMisconfiguredError | LeaseHeldError):
        fail(str(exc), EXIT_RUNTIME)
    fail(f"database unavailable: {exc}", EXIT_RUNTIME)


def _print_human(summary: PassSummary) -> None:
    table = Table(title="reconcile pass", show_header=False)
    for key, value in summary.as_dict().items():
        if key == "raised_by_kind":
            value = ", ".join(f"{k}={v}" for k, v in sorted(value.items())) or "—"
        elif key == "collections":
            value = ", ".join(f"{k}={v}" for k, v in value.items() if v or k == "checked")
        table.add_row(key.replace("_", " "), str(value if value is not None else "—"))
    Console().print(table)


@reconcile.command("once")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--fail-on-findings", is_flag=True, help="Exit 3 when the pass raised findings.")
@click.pass_context
def once(ctx: click.Context, as_json: bool, fail_on_findings: bool) -> None:
    """One pass over due transfers and collections, a summary, exit."""
    reconciler = _prepare(ctx)
    try:
        summary = asyncio.run(_once(reconciler))
    except (
        ProviderKeyRefusedError,
        ProviderMisconfiguredError,
        LeaseHeldError,
        DatabaseUnavailableError,
    ) as exc:
        _fail_known(exc)
    if as_json:
        click.echo(json.dumps(summary.as_dict(), sort_keys=True))
    else:
        _print_human(summary)
    if summary.provider_unreachable:
        looked_up = summary.checked + summary.collections.checked
        fail(f"the provider was unreachable for all {looked_up} lookups", EXIT_RUNTIME)
    if fail_on_findings and summary.findings_raised:
        ctx.exit(EXIT_FINDINGS)


@reconcile.command("run")
@metrics_port_option
@click.pass_context
def run(ctx: click.Context, metrics_port: int | None) -> None:
    """The scheduled reconciler: one pass every PAYRECON_POLL_INTERVAL, until SIGTERM/SIGINT."""
    reconciler = _prepare(ctx)
    with monitored(
        reconciler.settings, reconciler.engine, service="reconciler", port=metrics_port
    ) as registry:
        _run(dataclasses.replace(reconciler, metrics=create_reconciler_metrics(registry)))


def _run(reconciler: _Reconciler) -> None:
    engine, sink = reconciler.engine, reconciler.sink
    owner = new_owner()
    stop = StopFlag()
    stop.install()
    # One event loop for the whole run, so the one client (and its connection pool) serves
    # every pass; asyncio.run would give each pass a loop of its own.
    runner = asyncio.Runner()

    def job() -> None:
        runner.run(reconciler.one_pass(owner, keep=True))  # run_pass logs its own line

    def on_error(exc: BaseException) -> None:
        if isinstance(exc, LeaseHeldError):
            return  # another runner is working; we wait our turn quietly
        if isinstance(exc, ProviderKeyRefusedError):
            return  # run_pass already sent the (hourly) key alert
        now = utcnow()
        title, body = job_failed_alert(f"{type(exc).__name__}: {exc}")
        send_keyed_alert(
            engine,
            sink,
            key=f"reconcile-failed:{now.strftime('%Y-%m-%dT%H')}",
            title=title,
            body=body,
            now=now,
            rules=alert_rules(reconciler.settings),
        )

    heap.settle()  # start-up's objects out of the collector's walks, for the run's life
    try:
        run_every(reconciler.settings.poll_interval, job, stop=stop, on_error=on_error)
    finally:
        with runner:
            runner.run(reconciler.client.aclose())
        # Hand the SQLite runner lease back so a restarted reconciler need not wait it out.
        with contextlib.suppress(DatabaseUnavailableError), write_session(engine) as session:
            release_runner_lease(session, owner=owner)
