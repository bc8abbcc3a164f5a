"""One reconcile pass: claim due transfers, look them up concurrently, apply the answers.

`run_pass` is the thin shell around `reconcile.checks.evaluate`: it owns the
transactions (claim, then apply per chunk), the concurrency and rate cap of
the lookups, and the counters of the summary. The lookups of one chunk overlap
the recording of the previous one.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from ledger.checks import record_checks
from ledger.db import write_session
from ledger.events import transfers as relay_transfers
from ledger.events.findings import raise_finding, resolve_finding
from ledger.events.outbox import Subscriber, subscribers
from ledger.findings import open_kinds_by_subject
from ledger.models import Collection, Transfer
from ledger.reversals import reverse_transfer
from ledger.types import FindingKind, Initiation, TransferStatus, status_or_none, utcnow
from provider.errors import AuthenticationError
from reconcile.alerts import AlertSink, alert_provider_key_refused, dispatch_alerts
from reconcile.checks import Answer, LedgerView, NotFound, Policy, Transient, evaluate
from reconcile.collection_pass import apply_collections, collection_policy_of
from reconcile.errors import ProviderKeyRefusedError, ProviderMisconfiguredError
from reconcile.lease import (
    claim_targets,
    hold_runner_lease,
    new_owner,
    release_runner_lease,
    release_targets,
)
from reconcile.lookup import (
    COLLECTION,
    TRANSACTION,
    ForeignAnswer,
    Looked,
    Target,
    TransactionLookup,
    all_foreign,
    check_row,
    lookups,
)
from reconcile.pass_summary import PassSummary
from reconcile.ratelimit import TokenBucket

__all__ = ["PassSummary", "run_pass"]

logger = structlog.get_logger(__name__)

# Findings the reconciler owns; the receiver's kinds are never touched here.
RECONCILER_KINDS = frozenset(
    {
        FindingKind.AMOUNT_MISMATCH,
        FindingKind.FEE_MISMATCH,
        FindingKind.STATUS_CONFLICT,
        FindingKind.STALE_PENDING,
        FindingKind.UNKNOWN_TO_PROVIDER,
        FindingKind.UNVERIFIABLE,
    }
)
CLAIM_TTL_SECONDS = 300.0


class ReconcileSettings(Protocol):
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


def policy_of(settings: ReconcileSettings) -> Policy:
    """The pure core's policy from settings."""
    return Policy(
        check_backoff=settings.check_backoff,
        check_backoff_max=settings.check_backoff_max,
        not_found_limit=settings.not_found_limit,
        stale_after=settings.stale_after,
        fee_schedule=settings.fee_schedule,
        reverify_after=tuple(settings.reverify_after),
    )


def view_of(transfer: Transfer) -> LedgerView:
    """The pure core's view of a transfer row."""
    return LedgerView(
        reference=transfer.reference,
        amount=transfer.amount,
        fee=transfer.fee,
        status=status_or_none(transfer.status) or TransferStatus.PENDING,
        confirmed=transfer.confirmed,
        created_at=transfer.created_at,
        provider_reference=transfer.provider_reference,
        initiation=Initiation(transfer.initiation) if transfer.initiation else None,
        webhook_status=status_or_none(transfer.webhook_status),
        webhook_amount=transfer.webhook_amount,
        webhook_fee=transfer.webhook_fee,
        provider_status=status_or_none(transfer.provider_status),
        provider_amount=transfer.provider_amount,
        provider_fee=transfer.provider_fee,
        failure_reason=transfer.failure_reason,
        check_attempts=transfer.check_attempts,
        not_found_count=transfer.not_found_count,
        confirmed_at=transfer.confirmed_at,
        reverify_done=transfer.reverify_done,
    )


def _apply_one(
    session: Session,
    transfer: Transfer,
    answer: Answer,
    policy: Policy,
    now: dt.datetime,
    summary: PassSummary,
    open_kinds: frozenset[str],
    endpoints: list[Subscriber],
) -> None:
    """Record one answer on its transfer, with the relay events of what changed (in this
    transaction): `transfer.confirmed` the first time the provider confirms a final status,
    then `finding.opened` / `finding.resolved` for each finding opened or resolved."""
    verdict = evaluate(view_of(transfer), answer, policy, now)
    transfer.status = verdict.status.value
    if verdict.newly_confirmed:
        transfer.confirmed_at = now
    transfer.confirmed = verdict.confirmed
    transfer.provider_status = verdict.provider_status.value if verdict.provider_status else None
    transfer.provider_amount = verdict.provider_amount
    transfer.provider_fee = verdict.provider_fee
    transfer.failure_reason = verdict.failure_reason
    transfer.initiation = verdict.initiation.value if verdict.initiation else None
    if verdict.provider_reference and transfer.provider_reference is None:
        taken = session.execute(
            select(col(Transfer.id)).where(
                col(Transfer.provider_reference) == verdict.provider_reference
            )
        ).first()
        if taken is None:
            transfer.provider_reference = verdict.provider_reference
        else:  # an orphan row already holds it; the lead's registration merges them
            logger.warning("provider_reference_taken", reference=transfer.reference)
    transfer.check_attempts = verdict.check_attempts
    transfer.not_found_count = verdict.not_found_count
    transfer.last_checked_at = now
    transfer.next_check_at = (
        None if verdict.next_check_in is None else now + dt.timedelta(seconds=verdict.next_check_in)
    )
    transfer.lease_owner = None
    transfer.lease_until = None
    transfer.updated_at = now
    session.flush()
    assert transfer.id is not None
    if verdict.newly_confirmed:
        relay_transfers.confirmed(session, transfer, now=now, endpoints=endpoints)
    # --- Reversals (PRODUCT.md: Reversals): re-verification counters and the reversal. ---
    transfer.reverify_done = verdict.reverify_done
    summary.reverified += verdict.reverified
    if verdict.reversal is not None and reverse_transfer(
        session,
        transfer,
        reason=verdict.reversal.reason,
        source=verdict.reversal.source,
        now=now,
        endpoints=endpoints,
    ):
        summary.reversed += 1
        summary.count_raised(FindingKind.REVERSED_AFTER_SUCCESS.value)
    # --- end Reversals ---
    for kind, detail in verdict.open.items():
        if raise_finding(
            session,
            transfer_id=transfer.id,
            kind=kind,
            detail=detail,
            now=now,
            reference=transfer.reference,
            endpoints=endpoints,
        ):
            summary.count_raised(kind.value)
    for kind in verdict.resolved & RECONCILER_KINDS - {FindingKind.STATUS_CONFLICT}:
        if kind.value not in open_kinds:
            continue
        if resolve_finding(
            session,
            transfer_id=transfer.id,
            kind=kind,
            now=now,
            reference=transfer.reference,
            endpoints=endpoints,
        ):
            summary.findings_resolved += 1
    summary.checked += 1
    summary.confirmed += verdict.newly_confirmed
    summary.pending += verdict.status is TransferStatus.PENDING
    summary.provider_errors += verdict.provider_error
    summary.transient_errors += isinstance(answer, Transient) and not isinstance(
        answer, ForeignAnswer
    )
    summary.foreign_answers += isinstance(answer, ForeignAnswer)
    summary.not_found += isinstance(answer, NotFound)


def _apply(
    engine: Engine,
    results: Sequence[Looked],
    *,
    owner: str,
    policy: Policy,
    now: dt.datetime,
    summary: PassSummary,
) -> None:
    with write_session(engine) as session:
        by_id = {looked.target.id: looked.answer for looked in results}
        open_kinds = open_kinds_by_subject(session, column="transfer_id", ids=by_id)
        endpoints = subscribers(session)  # read once for the chunk's relay events
        rows = session.execute(
            select(Transfer)
            .where(col(Transfer.id).in_(list(by_id)))
            .order_by(col(Transfer.id))
            .with_for_update()
        ).scalars()
        for transfer in rows:
            if transfer.lease_owner != owner:
                continue  # our claim expired and a peer took it: its answer wins
            assert transfer.id is not None
            _apply_one(
                session,
                transfer,
                by_id[transfer.id],
                policy,
                now,
                summary,
                frozenset(open_kinds.get(transfer.id, ())),
                endpoints,
            )
        # Every lookup is kept, in the decision's transaction: one executemany for the chunk.
        record_checks(session, [check_row(looked, now) for looked in results])


@dataclass(frozen=True)
class _Book:
    """One kind of money movement a pass checks: its table, its lookup, and how a chunk of
    answers is recorded (in one transaction of its own)."""

    model: type[Transfer] | type[Collection]
    method: str
    apply: Callable[..., None]  # (engine, results, *, owner, now, summary)


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
    books = (
        _Book(Transfer, TRANSACTION, partial(_apply, policy=run.policy)),
        _Book(
            Collection,
            COLLECTION,
            partial(apply_collections, policy=collection_policy_of(settings)),
        ),
    )
    await _hold_lease(run)
    try:
        for book in books:
            await _check_due(run, book)
            if run.summary.stopped:
                break
    finally:
        if run.lease_ttl is not None and not keep_runner_lease:
            await asyncio.to_thread(_drop, engine, run.owner)
    await _raise_if_stopped(run)
    summary = run.summary
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


async def _check_due(run: _Pass, book: _Book) -> None:
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
            results = await _ask(run, targets, book.method)
            if run.summary.stopped:
                await asyncio.to_thread(
                    release_targets, run.engine, book.model, targets, owner=run.owner
                )
                break
            if applying is not None:
                await applying
            applying = asyncio.create_task(
                asyncio.to_thread(
                    book.apply,
                    run.engine,
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
