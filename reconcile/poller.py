"""One reconcile pass: claim due rows of every book, look them up concurrently, record the answers.

`run_pass` is the thin shell around the books (`reconcile.books`): for each book looked up
at the provider it claims due rows, looks them up under the concurrency and rate cap, and
hands each chunk of answers to the one recorder (`reconcile.books.recorder`), in a
transaction of its own. The lookups of one chunk overlap the recording of the previous one.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine

from ledger.db import write_session
from ledger.types import utcnow
from provider.errors import AuthenticationError
from reconcile.alert_plan import AlertSettings
from reconcile.alerts import AlertSink, alert_provider_key_refused, dispatch_alerts
from reconcile.answers import Transient
from reconcile.books.book import Book
from reconcile.books.collections import CollectionBook, collection_policy_of
from reconcile.books.recorder import record_chunk
from reconcile.books.transfers import TransferBook, policy_of
from reconcile.checks import Policy
from reconcile.errors import ProviderKeyRefusedError, ProviderMisconfiguredError
from reconcile.lease import (
    claim_targets,
    hold_runner_lease,
    new_owner,
    release_runner_lease,
    release_targets,
)
from reconcile.lookup import (
    TRANSACTION,
    ForeignAnswer,
    Looked,
    Target,
    TransactionLookup,
    all_foreign,
    lookups,
)
from reconcile.pass_summary import PassSummary
from reconcile.ratelimit import TokenBucket
from reconcile.statements.passes import match_statements
from telemetry.tracing import traced

__all__ = ["PassSummary", "run_pass"]

logger = structlog.get_logger(__name__)

CLAIM_TTL_SECONDS = 300.0


class ReconcileSettings(AlertSettings, Protocol):
    """The settings a pass reads (payrecon.settings.Settings satisfies it)."""

    @property
    def stale_after(self) -> int: ...
    @property
    def check_backoff(self) -> int: ...
    @property
    def check_backoff_max(self) -> int: ...
    @property
    def not_found_limit(self) -> int: ...
    @property
    def provider_concurrency(self) -> int: ...
    @property
    def provider_max_rps(self) -> float: ...
    @property
    def poll_interval(self) -> float: ...
    @property
    def fee_schedule(self) -> Any: ...
    @property
    def collection_grace(self) -> int: ...
    @property
    def reverify_after(self) -> tuple[int, ...]: ...


@traced("reconcile.pass")
async def run_pass(
    engine: Engine,
    client: TransactionLookup,
    settings: ReconcileSettings,
    *,
    now: dt.datetime | None = None,
    owner: str | None = None,
    sink: AlertSink | None = None,
    chunk_size: int | None = None,
    keep_runner_lease: bool = False,
    bucket: TokenBucket | None = None,
) -> PassSummary:
    """Check every due transfer once; apply answers, raise/resolve findings, send alerts.

    `now` is the pass's clock (tests pass a fake one). On SQLite the runner lease is
    taken first (LeaseHeldError when another reconciler holds it) and released at the
    end unless `keep_runner_lease`. A refused key stops the pass: one alert, then
    ProviderKeyRefusedError. When every lookup of the pass's first chunk got an answer
    that is not the provider's (a wrong base URL), nothing is recorded and
    ProviderMisconfiguredError is raised.
    """
    run = _Pass(
        engine=engine,
        client=client,
        sink=sink,
        owner=owner or new_owner(),
        now=now or utcnow(),
        policy=policy_of(settings),
        chunk_size=chunk_size or max(100, settings.provider_concurrency * 25),
        semaphore=asyncio.Semaphore(settings.provider_concurrency),
        bucket=bucket or TokenBucket(settings.provider_max_rps),
        lease_ttl=(
            max(60.0, 3 * settings.poll_interval, CLAIM_TTL_SECONDS)
            if engine.dialect.name == "sqlite"
            else None
        ),
    )
    books: tuple[Book[Any, Any], ...] = (
        TransferBook(run.policy),
        CollectionBook(collection_policy_of(settings)),
    )
    await _hold_lease(run)
    try:
        for book in books:
            if book.lookup is None:
                continue  # matched, not looked up
            await _check_due(run, book, book.lookup)
            if run.summary.stopped:
                break
    finally:
        if run.lease_ttl is not None and not keep_runner_lease:
            await asyncio.to_thread(_drop, engine, run.owner)
    await _raise_if_stopped(run)
    summary = run.summary
    summary.statements = await asyncio.to_thread(match_statements, engine, settings, now=run.now)
    summary.alerts_sent, summary.alerts_failed = await asyncio.to_thread(
        dispatch_alerts, engine, sink, now=run.now, policy=run.policy
    )
    logger.info("reconcile_pass", **{k: v for k, v in summary.as_dict().items() if v})
    return summary


@dataclass
class _Pass:
    """One pass: what it was given, and what it found so far."""

    engine: Engine
    client: TransactionLookup
    sink: AlertSink | None
    owner: str
    now: dt.datetime
    policy: Policy
    chunk_size: int
    semaphore: asyncio.Semaphore
    bucket: TokenBucket
    lease_ttl: float | None  # None: no runner lease (only SQLite takes one)
    summary: PassSummary = field(default_factory=PassSummary)
    provider_answered: bool = False
    foreign: ForeignAnswer | None = None  # the answer that stopped the pass as misconfigured


async def _hold_lease(run: _Pass) -> None:
    if run.lease_ttl is not None:
        await asyncio.to_thread(_hold, run.engine, run.owner, run.now, run.lease_ttl)


async def _check_due(run: _Pass, book: Book[Any, Any], method: str) -> None:
    """Claim, look up and apply chunk after chunk of the book's rows until nothing is due or
    the pass stops.

    The lookups of one chunk overlap the recording of the previous one.
    """
    applying: asyncio.Task[None] | None = None
    try:
        while True:
            targets = await asyncio.to_thread(
                claim_targets,
                run.engine,
                book.model,
                owner=run.owner,
                now=run.now,
                started=run.now,
                ttl=CLAIM_TTL_SECONDS,
                limit=run.chunk_size,
            )
            if not targets:
                break
            results = await _ask(run, targets, method)
            if run.summary.stopped:
                await asyncio.to_thread(
                    release_targets, run.engine, book.model, targets, owner=run.owner
                )
                break
            if applying is not None:
                await applying
            applying = asyncio.create_task(
                asyncio.to_thread(
                    record_chunk,
                    run.engine,
                    book,
                    results,
                    owner=run.owner,
                    now=run.now,
                    summary=run.summary,
                )
            )
            await _hold_lease(run)
        if applying is not None:
            await applying
            applying = None
    finally:
        if applying is not None:
            await asyncio.gather(applying, return_exceptions=True)


async def _ask(run: _Pass, targets: Sequence[Target], method: str = TRANSACTION) -> list[Looked]:
    """The chunk's answers; marks the pass stopped on a refused key, or when, before the
    provider has answered once, every answer came from something that is not the provider."""
    results: list[Looked] = []
    try:
        results = await lookups(run.client, targets, run.semaphore, run.bucket, method=method)
    except* AuthenticationError:
        run.summary.stopped = "provider_key_refused"
    if run.summary.stopped or run.provider_answered:
        return results
    run.foreign = all_foreign(results)
    if run.foreign is not None:
        # Nothing is recorded: once the URL is fixed these transfers are due at once.
        run.summary.stopped = "provider_misconfigured"
    # Transient failures prove nothing either way; any other answer is the provider.
    run.provider_answered = any(not isinstance(looked.answer, Transient) for looked in results)
    return results


async def _raise_if_stopped(run: _Pass) -> None:
    if run.summary.stopped == "provider_key_refused":
        await asyncio.to_thread(alert_provider_key_refused, run.engine, run.sink, now=run.now)
        raise ProviderKeyRefusedError(
            "the provider refused the secret key (PAYRECON_PROVIDER_SECRET_KEY): "
            "401 Unauthenticated; the pass stopped"
        )
    if run.foreign is not None and run.summary.stopped == "provider_misconfigured":
        raise ProviderMisconfiguredError(
            f"PAYRECON_PROVIDER_BASE_URL does not point at the provider: {run.foreign.detail}; "
            "no lookup got the provider's answer, so the pass stopped without recording them"
        )


def _hold(engine: Engine, owner: str, now: dt.datetime, ttl: float) -> None:
    # The lease runs on wall-clock time even when the pass's `now` is a test's fake clock.
    del now
    with write_session(engine) as session:
        hold_runner_lease(session, owner=owner, now=utcnow(), ttl=ttl)


def _drop(engine: Engine, owner: str) -> None:
    with write_session(engine) as session:
        release_runner_lease(session, owner=owner)
