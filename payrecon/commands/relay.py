"""`payrecon relay run|once|replay`: the delivery worker and re-queueing (docs/rules.md: Relay)."""

from __future__ import annotations

import asyncio
import json
import signal

import click
import structlog

from admin.actions import relay as actions
from admin.actions.relay import ReplayFilters
from admin.errors import InvalidError, NotFoundError
from ledger.db import write_session
from ledger.errors import LeaseHeldError, LedgerError
from ledger.types import utcnow
from payrecon import heap
from payrecon.actor import cli_operator
from payrecon.context import EXIT_RUNTIME, EXIT_USAGE, app_context, fail
from payrecon.errors import ConfigError
from payrecon.monitoring import metrics_port_option, monitored
from payrecon.wiring import make_worker
from relay.errors import RelayError
from relay.metrics import WorkerMetrics, register_relay_metrics
from relay.recorder import Summary
from relay.worker import Worker

logger = structlog.get_logger(__name__)


@click.group()
def relay() -> None:
    """Deliver payrecon's signed events to the merchant's endpoints."""


def _worker(ctx: click.Context) -> Worker:
    app = app_context(ctx)
    settings = app.settings()
    try:
        box = settings.secret_box()
        # The worker writes claims and attempt records only (events are written, durably, by
        # whoever changes the ledger): a commit lost to a power cut is an event sent again.
        return make_worker(settings, app.engine(durable=False), box)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    except RelayError as exc:
        fail(str(exc), EXIT_USAGE)


async def _run(worker: Worker) -> Summary:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def request_stop(signum: signal.Signals) -> None:
        logger.info("stop_requested", signal=signum.name)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, request_stop, signum)
    return await worker.run(stop)


@relay.command("run")
@metrics_port_option
@click.pass_context
def run(ctx: click.Context, metrics_port: int | None) -> None:
    """The delivery worker, until SIGTERM/SIGINT (attempts in flight finish first)."""
    worker = _worker(ctx)
    app = app_context(ctx)
    with monitored(app.settings(), worker.engine, service="relay", port=metrics_port) as registry:
        register_relay_metrics(registry, worker.engine)
        worker.metrics = WorkerMetrics(registry)
        _run_worker(worker)


def _run_worker(worker: Worker) -> None:
    logger.info("relay_started", owner=worker.owner, concurrency=worker.config.concurrency)
    heap.settle()  # start-up's objects out of the collector's walks, for the run's life
    summary = asyncio.run(_run(worker))
    logger.info("relay_stopped", **summary.as_dict())


@relay.command("once")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def once(ctx: click.Context, as_json: bool) -> None:
    """Deliver every attempt due now, then exit."""
    worker = _worker(ctx)
    try:
        summary = asyncio.run(worker.once())
    except LeaseHeldError as exc:
        fail(f"{exc} (a `relay run` is delivering)", EXIT_RUNTIME)
    except LedgerError as exc:
        fail(f"database unavailable: {exc}", EXIT_RUNTIME)
    if as_json:
        click.echo(json.dumps(summary.as_dict()))
    else:
        click.echo(
            f"attempted {summary.attempted}: {summary.delivered} delivered, "
            f"{summary.failed} failed for good; {summary.pending} pending"
        )


@relay.command("replay")
@click.option("--endpoint", "endpoint_id", type=int, help="Only this endpoint.")
@click.option("--type", "event_type", help="Only events of this type (e.g. transfer.confirmed).")
@click.option("--since", help="Only events made on or after this Lagos day (YYYY-MM-DD).")
@click.option("--failed-only", is_flag=True, help="Only events whose delivery failed for good.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def replay(
    ctx: click.Context,
    endpoint_id: int | None,
    event_type: str | None,
    since: str | None,
    failed_only: bool,
    as_json: bool,
) -> None:
    """Queue events again (same event ids) as new pending deliveries."""
    filters = ReplayFilters(
        endpoint_id=endpoint_id, type=event_type, since=since, failed_only=failed_only
    )
    engine = app_context(ctx).engine()
    try:
        with write_session(engine) as session:
            queued = actions.replay(session, cli_operator(), filters, now=utcnow())
    except InvalidError as exc:
        fail(f"--{exc.field}: {exc.message}", EXIT_USAGE)
    except NotFoundError as exc:
        fail(str(exc), EXIT_USAGE)
    except LedgerError as exc:
        fail(f"database unavailable: {exc}", EXIT_RUNTIME)
    if as_json:
        click.echo(json.dumps({"queued": queued}))
    else:
        click.echo(f"queued {queued} deliveries")
