"""`payrecon relay run|once|replay`: the delivery worker and re-queueing (PRODUCT.md: Relay)."""

from __future__ import annotations

import asyncio
import json
import signal

import click
import structlog

from ledger.audit import AuditAction
from ledger.db import write_session
from ledger.errors import LeaseHeldError, LedgerError
from ledger.types import utcnow
from payrecon.actor import audit_cli
from payrecon.context import EXIT_RUNTIME, EXIT_USAGE, app_context, fail
from payrecon.errors import ConfigError
from payrecon.monitoring import metrics_port_option, monitored
from payrecon.wiring import make_worker
from relay.errors import EndpointNotFoundError, RelayError
from relay.metrics import WorkerMetrics, register_relay_metrics
from relay.worker import Summary, Worker

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
    from ledger.events.types import RelayEventType
    from reconcile.reports.errors import PeriodError
    from reconcile.reports.period import lagos_midnight_utc, parse_day
    from relay.replay import queue_again

    kind = None
    if event_type is not None:
        try:
            kind = RelayEventType(event_type.strip())
        except ValueError:
            known = ", ".join(sorted(RelayEventType))
            fail(f"--type: unknown event type {event_type!r} (known: {known})", EXIT_USAGE)
    start = None
    if since is not None:
        try:
            start = lagos_midnight_utc(parse_day(since, option="--since"))
        except PeriodError as exc:
            fail(str(exc), EXIT_USAGE)
    engine = app_context(ctx).engine()
    try:
        with write_session(engine) as session:
            queued = queue_again(
                session,
                now=utcnow(),
                endpoint_id=endpoint_id,
                type=kind,
                since=start,
                failed_only=failed_only,
            )
            filters = {"endpoint": endpoint_id, "type": kind, "since": since}
            detail = " ".join(f"{k}={v}" for k, v in filters.items() if v is not None)
            detail = f"{queued} queued" + (f" ({detail})" if detail else "")
            detail += " failed only" if failed_only else ""
            audit_cli(session, AuditAction.RELAY_REPLAY, None, detail, now=utcnow())
    except EndpointNotFoundError as exc:
        fail(str(exc), EXIT_USAGE)
    except LedgerError as exc:
        fail(f"database unavailable: {exc}", EXIT_RUNTIME)
    if as_json:
        click.echo(json.dumps({"queued": queued}))
    else:
        click.echo(f"queued {queued} deliveries")
