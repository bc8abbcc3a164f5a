"""`payrecon demo`: the whole job on a fresh SQLite file and the built-in sandbox.

The sandbox and the receiver run in this process on free loopback ports. Payouts go through
the real payout path (name enquiry, intent, initiation), and collections through the real
collection path (payrecon.democollections: paid exactly, over, under, late and never by the
sandbox's customers); the sandbox completes the payouts and sends
webhooks with its faults (dropped, duplicated and delayed webhooks, a tampered fee, a transfer
stuck in pending, a failure that still charges a fee); the reconciler runs until nothing is
due; the relay delivers payrecon's own events to a local consumer that verifies each one; the
reports are written next to the ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy import Engine, func, select
from sqlmodel import col

from ledger.db import create_db_engine, read_session, write_session
from ledger.events.types import Subject
from ledger.migrate import upgrade
from ledger.models import Finding, Transfer
from ledger.types import TransferStatus, utcnow
from payments.payouts import PayoutRequest, send_payout
from payrecon.app import create_app
from payrecon.clients import make_async_client, make_client
from payrecon.democollections import (
    COLLECTION_GRACE,
    COLLECTION_TTL,
    CollectionFigures,
    collect,
    collection_figures,
)
from payrecon.democonsumer import PATH, DemoConsumer
from payrecon.demoreversal import REVERSED, DemoReversal
from payrecon.demostatement import DemoStatement, tie_out_demo
from payrecon.errors import DemoDirectoryError
from payrecon.servers import free_port, running_server
from payrecon.settings import Settings, load_settings
from payrecon.wiring import make_worker
from reconcile.poller import run_pass
from reconcile.reports.period import Period
from reconcile.reports.render import write_report
from relay import endpoints
from relay.recorder import Summary
from sandbox.app import create_app as create_sandbox
from sandbox.config import SandboxConfig
from sandbox.faults import parse_faults

# The sandbox's default faults for the demo; the per-transfer specials are chosen below.
DEMO_FAULTS = (
    "seed={seed},webhook_drop=0.05,webhook_duplicate=0.1,webhook_delay=0.1,webhook_delay_seconds=2"
)
DEMO_FEE_SCHEDULE = "0-500000:1000,500001-5000000:2500,5000001-:5000"
REPORTS = ("html", "csv", "json")
REPORT_NAMES = tuple(f"report.{fmt}" for fmt in REPORTS)
STUCK, DORMANT, TAMPERED = 3, 5, 7  # which payouts get the special treatment


@dataclass
class DemoResult:
    """What the demo did."""

    directory: Path
    transfers: int
    confirmed: int = 0
    pending: int = 0
    open_findings: dict[str, int] = field(default_factory=dict)
    passes: int = 0
    settled: bool = False
    seconds: float = 0.0
    reports: list[Path] = field(default_factory=list)
    # The relay: events delivered to the demo's consumer, and what it made of them.
    relayed: Summary = field(default_factory=Summary)
    verified: dict[str, int] = field(default_factory=dict)
    refused: int = 0
    collections: CollectionFigures = field(default_factory=CollectionFigures)
    statement: DemoStatement | None = None
    reversal: DemoReversal | None = None


def _fresh_directory(directory: Path) -> None:
    """Create `directory` or clear a previous run's files; DemoDirectoryError when unusable."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise DemoDirectoryError(str(directory), "a file is in the way") from exc
    except OSError as exc:
        raise DemoDirectoryError(str(directory), f"cannot create it ({_reason(exc)})") from exc
    try:
        for name in ("ledger.db", "ledger.db-wal", "ledger.db-shm", *REPORT_NAMES):
            (directory / name).unlink(missing_ok=True)
        # Permission bits do not stop root, and /proc or a read-only mount only refuse an
        # actual write: a real (temporary) file is the only reliable test.
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise DemoDirectoryError(str(directory), f"cannot write there ({_reason(exc)})") from exc


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _settings(directory: Path, sandbox_url: str, secret_key: str) -> Settings:
    # Short clocks so a minute shows everything: staleness after 5 s, re-checks every second.
    return load_settings(
        database_url=f"sqlite:///{directory.resolve()}/ledger.db",
        provider_base_url=sandbox_url,
        provider_secret_key=secret_key,
        stale_after=5,
        check_backoff=1,
        check_backoff_max=2,
        poll_interval=1,
        provider_concurrency=16,
        provider_max_rps=0,
        fee_schedule=DEMO_FEE_SCHEDULE,
        collection_grace=COLLECTION_GRACE,
        # Successes are looked up again 2 s after confirmation, so the demo's reversal is found
        # within the minute (docs/rules.md: Reversals).
        reverify_after="2s",
        # A key of this run's own seals the consumer's secret; retries come fast.
        relay_keys=secrets.token_urlsafe(32),
        relay_retry_schedule="0.5s,1s,2s",
        # The demo's consumer listens on this machine's loopback, which endpoints may not
        # reach unless allowed (docs/rules.md: Robustness rules).
        relay_allow_networks="127.0.0.0/8",
    )


def _plan(
    accounts: list[dict[str, Any]], count: int, seed: int
) -> list[tuple[PayoutRequest, bool]]:
    """The payouts to make: (request, tamper its fee?), deterministic for a seed."""
    rng = random.Random(seed)
    normal = [a for a in accounts if a["behaviour"] == "succeeds"]
    special = {a["behaviour"]: a for a in accounts}
    plan = []
    for index in range(count):
        account = normal[index % len(normal)]
        if index == STUCK:
            account = special["stays_pending"]
        elif index == DORMANT:
            account = special["fails_after_pending"]
        amount = rng.randrange(100_000, 20_000_000, 50)  # ₦1,000 to ₦200,000
        request = PayoutRequest(
            amount, account["bank_code"], account["account_number"], f"DEMO-{seed}-{index:04d}"
        )
        plan.append((request, index == TAMPERED))
    return plan


def _pay(
    engine: Engine,
    console: Console,
    settings: Settings,
    sandbox_url: str,
    plan: list[tuple[PayoutRequest, bool]],
    faults: str,
) -> None:
    progress = Progress(
        TextColumn("paying out"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    with progress, make_client(settings) as client, httpx.Client() as control:
        task = progress.add_task("pay", total=len(plan))
        for request, tamper in plan:
            if tamper:  # this one payout's success webhook carries a fee the provider never charged
                control.post(
                    f"{sandbox_url}/_sandbox/faults",
                    # …and the wallet statement shows it charged ₦5 more than the provider says
                    # (the demo's tie-out explains that residual).
                    json={
                        **parse_faults(faults).as_dict(),
                        "tamper_fee": 1.0,
                        "statement_fee_drift": 1.0,
                    },
                )
            send_payout(engine, client, request, now=utcnow())
            if tamper:
                control.post(f"{sandbox_url}/_sandbox/faults", json=parse_faults(faults).as_dict())
            progress.advance(task)


def _state(engine: Engine) -> tuple[int, int, int, dict[str, int]]:
    """(total, confirmed, unsettled, open findings by kind); unsettled = unconfirmed, unflagged."""
    with read_session(engine) as session:
        total = session.execute(select(func.count()).select_from(Transfer)).scalar_one()
        confirmed = session.execute(
            select(func.count()).select_from(Transfer).where(col(Transfer.confirmed).is_(True))
        ).scalar_one()
        flagged = select(col(Finding.subject_id)).where(
            col(Finding.resolved_at).is_(None), col(Finding.subject) == Subject.TRANSFER.value
        )
        unsettled = session.execute(
            select(func.count())
            .select_from(Transfer)
            .where(col(Transfer.confirmed).is_(False), col(Transfer.id).not_in(flagged))
        ).scalar_one()
        kinds: dict[str, int] = {
            kind: count
            for kind, count in session.execute(
                select(col(Finding.kind), func.count())
                .where(col(Finding.resolved_at).is_(None))
                .group_by(col(Finding.kind))
            ).all()
        }
    return total, confirmed, unsettled, kinds


def _pending_webhooks(control: httpx.Client, sandbox_url: str) -> bool:
    """True while some webhook the sandbox will send has not been delivered (or dropped) yet."""
    transfers = control.get(f"{sandbox_url}/_sandbox/transfers").json()["transfers"]
    completed = {t["merchant_reference"] for t in transfers if t["status"] != "pending"}
    rows = control.get(f"{sandbox_url}/_sandbox/webhooks").json()["attempts"]
    finished = {a["merchant_reference"] for a in rows if a.get("delivered") or a.get("dropped")}
    return bool(completed - finished)


def _reconcile(
    engine: Engine,
    settings: Settings,
    console: Console,
    sandbox_url: str,
    result: DemoResult,
    deadline: float,
) -> None:
    progress = Progress(
        TextColumn("reconciling"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(),
        console=console,
    )
    client = make_async_client(settings)
    # One event loop for every pass, so the one client (and its connection pool) serves them all.
    with progress, httpx.Client() as control, asyncio.Runner() as runner:
        task = progress.add_task("reconcile", total=result.transfers, note="")
        quiet_since: float | None = None
        try:
            while time.monotonic() < deadline:
                runner.run(run_pass(engine, client, settings))
                result.passes += 1
                if result.reversal is not None:
                    result.reversal.step(engine, control, sandbox_url)
                _, confirmed, unsettled, kinds = _state(engine)
                note = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
                progress.update(task, completed=confirmed, note=note)
                busy = (
                    unsettled > 0
                    or collection_figures(engine).unsettled > 0
                    or _pending_webhooks(control, sandbox_url)
                    or (result.reversal is not None and result.reversal.waiting)
                )
                stale_seen = "stale_pending" in kinds
                if not busy and stale_seen:
                    # Settled: wait one more quiet second so late duplicates are reconciled too.
                    quiet_since = quiet_since or time.monotonic()
                    if time.monotonic() - quiet_since >= 1.0:
                        result.settled = True
                        break
                else:
                    quiet_since = None
                time.sleep(settings.poll_interval)
        finally:
            runner.run(client.aclose())
    _, result.confirmed, _, result.open_findings = _state(engine)


def _relay(
    engine: Engine, settings: Settings, console: Console, result: DemoResult, consumer: DemoConsumer
) -> None:
    """Deliver every event due to the consumer, as `payrecon relay once` does."""
    worker = make_worker(settings, engine, settings.secret_box())
    with console.status("relaying payrecon's events to the demo consumer"):
        for _ in range(5):  # a retry (a failed first attempt) is due within 3.5 s
            summary = asyncio.run(worker.once())
            if summary.pending == 0:
                break
            time.sleep(1.0)
    result.relayed = worker.summary
    result.relayed.pending = summary.pending
    result.verified = dict(consumer.verified)
    result.refused = consumer.refused


def _add_consumer(engine: Engine, settings: Settings, port: int) -> DemoConsumer:
    """The demo's consumer, added as an endpoint of every default event type."""
    with write_session(engine) as session:
        _, secret = endpoints.add(
            session,
            settings.secret_box(),
            url=f"http://127.0.0.1:{port}{PATH}",
            description="payrecon demo consumer",
            now=utcnow(),
            allow=settings.relay_allow_networks,
        )
    return DemoConsumer(secret)


def _write_reports(engine: Engine, directory: Path, settings: Settings) -> list[Path]:
    paths = []
    with read_session(engine) as session:
        for fmt in REPORTS:
            path = directory / f"report.{fmt}"
            write_report(
                session,
                period=Period(None, None),
                fmt=fmt,
                path=path,
                stale_after=settings.stale_after,
            )
            paths.append(path)
    return paths


@contextlib.contextmanager
def _stack(directory: Path, seed: int) -> Iterator[tuple[str, Settings, Engine, SandboxConfig]]:
    """Sandbox and receiver on free loopback ports over a fresh ledger; all stopped on exit."""
    receiver_port = free_port()
    faults = DEMO_FAULTS.format(seed=seed)
    config = SandboxConfig(
        seed=seed,
        complete_after=0.5,
        webhook_url=f"http://127.0.0.1:{receiver_port}/webhook",
        webhook_retry_delays=(0.5, 1.0, 2.0, 4.0),
        faults=parse_faults(faults),
        collection_ttl=COLLECTION_TTL,
    )
    with running_server(create_sandbox(config)) as sandbox_url:
        settings = _settings(directory, sandbox_url, config.secret_key)
        upgrade(settings.database_url)
        engine = create_db_engine(settings.database_url)
        try:
            with running_server(create_app(settings, engine=engine), port=receiver_port):
                yield sandbox_url, settings, engine, config
        finally:
            engine.dispose()


def run_demo(
    console: Console,
    *,
    transfers: int = 200,
    directory: Path = Path("payrecon-demo"),
    seed: int = 7,
    time_limit: float = 55.0,
) -> DemoResult:
    """Run the demo; the result says whether every transfer ended confirmed or flagged."""
    started = time.monotonic()
    _fresh_directory(directory)
    result = DemoResult(directory=directory, transfers=transfers)
    with _stack(directory, seed) as (sandbox_url, settings, engine, _):
        consumer_port = free_port()
        consumer = _add_consumer(engine, settings, consumer_port)
        accounts = httpx.get(f"{sandbox_url}/_sandbox/accounts").json()["accounts"]
        plan = _plan(accounts, transfers, seed)
        if transfers > REVERSED:
            result.reversal = DemoReversal(plan[REVERSED][0].reference)
        console.print(f"sandbox  {sandbox_url}   ledger  {directory}/ledger.db")
        _pay(engine, console, settings, sandbox_url, plan, DEMO_FAULTS.format(seed=seed))
        with console.status("creating collections and paying them in the sandbox"):
            collect(engine, settings, sandbox_url, DEMO_FAULTS.format(seed=seed), seed)
        _reconcile(engine, settings, console, sandbox_url, result, started + time_limit)
        with running_server(consumer.app(), port=consumer_port):
            _relay(engine, settings, console, result, consumer)
        result.statement = tie_out_demo(engine, settings, sandbox_url, directory)
        result.reports = _write_reports(engine, directory, settings)
        result.collections = collection_figures(engine)
        with read_session(engine) as session:
            result.pending = session.execute(
                select(func.count())
                .select_from(Transfer)
                .where(col(Transfer.status) == TransferStatus.PENDING.value)
            ).scalar_one()
    result.seconds = time.monotonic() - started
    return result
