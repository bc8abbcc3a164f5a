"""One reconcile pass: claim due transfers, look them up concurrently, apply the answers.

`run_pass` is the thin shell around `reconcile.checks.evaluate`: it owns the
transactions (claim, then apply per chunk), the concurrency and rate cap of
the lookups, and the counters of the summary. The lookups of one chunk overlap
the recording of the previous one.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from ledger.checks import CheckResult, CheckRow, record_checks
from ledger.db import write_session
from ledger.events import transfers as relay_transfers
from ledger.events.findings import raise_finding, resolve_finding
from ledger.events.outbox import Subscriber, subscribers
from ledger.models import Finding, Transfer
from ledger.types import FindingKind, Initiation, TransferStatus, utcnow
from provider.errors import (
    AuthenticationError,
    ForeignAnswerError,
    NotFoundError,
    ProviderError,
    RateLimitedError,
    TransientError,
)
from reconcile.alerts import AlertSink, alert_provider_key_refused, dispatch_alerts
from reconcile.checks import (
    Answer,
    Found,
    LedgerView,
    NotFound,
    Policy,
    Transient,
    Uninterpretable,
    evaluate,
)
from reconcile.errors import ProviderKeyRefusedError, ProviderMisconfiguredError
from reconcile.lease import claim_due, hold_runner_lease, new_owner, release_runner_lease
from reconcile.ratelimit import TokenBucket

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


class TransactionLookup(Protocol):
    """The seam to the provider: AsyncProviderClient satisfies it."""

    async def get_transaction(self, reference: str) -> Any: ...


@dataclass
class PassSummary:
    """What one pass did; `reconcile once --json` prints `as_dict()`."""

    checked: int = 0
    confirmed: int = 0
    pending: int = 0
    findings_raised: int = 0
    findings_resolved: int = 0
    provider_errors: int = 0
    not_found: int = 0
    transient_errors: int = 0
    foreign_answers: int = 0  # answers not in the provider's format (a wrong base URL)
    alerts_sent: int = 0
    alerts_failed: int = 0
    raised_by_kind: dict[str, int] = field(default_factory=dict)
    # "provider_key_refused" or "provider_misconfigured" when the pass stopped early
    stopped: str | None = None

    @property
    def provider_unreachable(self) -> bool:
        """True when every lookup of the pass failed transiently (exit 1)."""
        return self.checked > 0 and self.transient_errors + self.foreign_answers == self.checked

    def as_dict(self) -> dict[str, Any]:
        """The JSON summary."""
        return asdict(self)


def policy_of(settings: ReconcileSettings) -> Policy:
    """The pure core's policy from settings."""
    return Policy(
        check_backoff=settings.check_backoff,
        check_backoff_max=settings.check_backoff_max,
        not_found_limit=settings.not_found_limit,
        stale_after=settings.stale_after,
        fee_schedule=settings.fee_schedule,
    )


@dataclass(frozen=True)
class _Target:
    id: int
    lookup_reference: str


@dataclass(frozen=True)
class _Looked:
    """One target's answer and the HTTP status it came with."""

    target: _Target
    answer: Answer
    http_status: int | None


def _status(value: str | None) -> TransferStatus | None:
    try:
        return None if value is None else TransferStatus(value)
    except ValueError:
        return None


def view_of(transfer: Transfer) -> LedgerView:
    """The pure core's view of a transfer row."""
    return LedgerView(
        reference=transfer.reference,
        amount=transfer.amount,
        fee=transfer.fee,
        status=_status(transfer.status) or TransferStatus.PENDING,
        confirmed=transfer.confirmed,
        created_at=transfer.created_at,
        provider_reference=transfer.provider_reference,
        initiation=Initiation(transfer.initiation) if transfer.initiation else None,
        webhook_status=_status(transfer.webhook_status),
        webhook_amount=transfer.webhook_amount,
        webhook_fee=transfer.webhook_fee,
        provider_status=_status(transfer.provider_status),
        provider_amount=transfer.provider_amount,
        provider_fee=transfer.provider_fee,
        failure_reason=transfer.failure_reason,
        check_attempts=transfer.check_attempts,
        not_found_count=transfer.not_found_count,
    )


@dataclass(frozen=True)
class ForeignAnswer(Transient):
    """Something that is not the provider answered (PRODUCT.md, Provider misconfiguration).

    To the pure core it is a provider error like any transient one (no finding, checked
    again later, never a "not found"); the pass counts it apart and stops when it is all
    it got.
    """

    url: str = ""


def answer_of(result: Any) -> Found | Uninterpretable:
    """A provider Transaction as the core's `Found` (or Uninterpretable when it is odd)."""
    try:
        status = TransferStatus(str(getattr(result.status, "value", result.status)))
    except ValueError:
        return Uninterpretable(f"unknown transaction status {result.status!r}")
    return Found(
        reference=result.reference,
        merchant_reference=result.merchant_reference,
        amount=result.amount,
        fee=result.fee,
        status=status,
        failure_reason=result.failure_reason,
    )


async def lookup(client: TransactionLookup, reference: str) -> Answer:
    """Ask the provider about one reference; every failure but a refused key becomes an Answer."""
    answer, _ = await lookup_with_status(client, reference)
    return answer


async def lookup_with_status(
    client: TransactionLookup, reference: str
) -> tuple[Answer, int | None]:
    """`lookup`, with the provider's HTTP status (None when no answer came) for the check row."""
    try:
        return answer_of(await client.get_transaction(reference)), 200
    except AuthenticationError:
        raise
    except NotFoundError as exc:
        return NotFound(), exc.status_code or 404
    except ForeignAnswerError as exc:
        return ForeignAnswer(exc.message, url=exc.url), exc.status_code
    except RateLimitedError as exc:
        return Transient(exc.message, retry_after=exc.retry_after), exc.status_code
    except TransientError as exc:
        return Transient(exc.message), exc.status_code
    except ProviderError as exc:
        return Uninterpretable(f"{type(exc).__name__}: {exc.message}"), exc.status_code
    except Exception as exc:  # a bug below us must not stop the pass; the check is retried
        logger.exception("lookup_crashed", reference=reference)
        return Transient(f"{type(exc).__name__}: {exc}"), None


def check_row(
    transfer_id: int, answer: Answer, http_status: int | None, now: dt.datetime
) -> CheckRow:
    """The provider check a lookup leaves in the ledger."""
    if isinstance(answer, Found):
        return CheckRow(
            transfer_id,
            now,
            http_status,
            CheckResult.FOUND,
            provider_status=answer.status.value,
            amount=answer.amount,
            fee=answer.fee,
            error=answer.failure_reason and f"failure reason: {answer.failure_reason}",
        )
    if isinstance(answer, NotFound):
        return CheckRow(transfer_id, now, http_status, CheckResult.NOT_FOUND)
    result = CheckResult.TRANSIENT if isinstance(answer, Transient) else CheckResult.UNINTERPRETABLE
    return CheckRow(transfer_id, now, http_status, result, error=answer.detail)


def _claim(
    engine: Engine, *, owner: str, now: dt.datetime, started: dt.datetime, limit: int
) -> list[_Target]:
    with write_session(engine) as session:
        ids = claim_due(
            session, owner=owner, now=now, pass_started=started, ttl=CLAIM_TTL_SECONDS, limit=limit
        )
        if not ids:
            return []
        rows = session.execute(
            select(
                col(Transfer.id), col(Transfer.reference), col(Transfer.provider_reference)
            ).where(col(Transfer.id).in_(ids))
        ).all()
    return [_Target(int(r[0]), r[2] or r[1]) for r in rows]


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
            summary.findings_raised += 1
            summary.raised_by_kind[kind.value] = summary.raised_by_kind.get(kind.value, 0) + 1
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
    results: Sequence[_Looked],
    *,
    owner: str,
    policy: Policy,
    now: dt.datetime,
    summary: PassSummary,
) -> None:
    with write_session(engine) as session:
        by_id = {looked.target.id: looked.answer for looked in results}
        statuses = {looked.target.id: looked.http_status for looked in results}
        checks: list[CheckRow] = []
        # One query for the chunk's open findings, so resolving costs nothing when none is open.
        open_kinds: dict[int, set[str]] = {}
        for transfer_id, kind in session.execute(
            select(col(Finding.transfer_id), col(Finding.kind)).where(
                col(Finding.transfer_id).in_(list(by_id)), col(Finding.resolved_at).is_(None)
            )
        ):
            open_kinds.setdefault(int(transfer_id), set()).add(str(kind))
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
            checks.append(check_row(transfer.id, by_id[transfer.id], statuses[transfer.id], now))
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
        # One executemany for the chunk, in the decision's transaction.
        record_checks(session, checks)


def _release(engine: Engine, targets: Sequence[_Target], *, owner: str) -> None:
    with write_session(engine) as session:
        for row in session.execute(
            select(Transfer).where(col(Transfer.id).in_([t.id for t in targets])).with_for_update()
        ).scalars():
            if row.lease_owner == owner:
                row.lease_owner = None
                row.lease_until = None


async def _lookups(
    client: TransactionLookup,
    targets: Sequence[_Target],
    semaphore: asyncio.Semaphore,
    bucket: TokenBucket,
) -> list[_Looked]:
    async def one(target: _Target) -> _Looked:
        async with semaphore:
            await bucket.acquire()
            return _Looked(target, *await lookup_with_status(client, target.lookup_reference))

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(t)) for t in targets]
    return [task.result() for task in tasks]


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
    await _hold_lease(run)
    try:
        await _check_due(run)
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


async def _check_due(run: _Pass) -> None:
    """Claim, look up and apply chunk after chunk until nothing is due or the pass stops.

    The lookups of one chunk overlap the recording of the previous one.
    """
    applying: asyncio.Task[None] | None = None
    try:
        while True:
            targets = await asyncio.to_thread(
                _claim,
                run.engine,
                owner=run.owner,
                now=run.now,
                started=run.now,
                limit=run.chunk_size,
            )
            if not targets:
                break
            results = await _ask(run, targets)
            if run.summary.stopped:
                await asyncio.to_thread(_release, run.engine, targets, owner=run.owner)
                break
            if applying is not None:
                await applying
            applying = asyncio.create_task(
                asyncio.to_thread(
                    _apply,
                    run.engine,
                    results,
                    owner=run.owner,
                    policy=run.policy,
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


async def _ask(run: _Pass, targets: Sequence[_Target]) -> list[_Looked]:
    """The chunk's answers; marks the pass stopped on a refused key, or when, before the
    provider has answered once, every answer came from something that is not the provider."""
    results: list[_Looked] = []
    try:
        results = await _lookups(run.client, targets, run.semaphore, run.bucket)
    except* AuthenticationError:
        run.summary.stopped = "provider_key_refused"
    if run.summary.stopped or run.provider_answered:
        return results
    run.foreign = _all_foreign(results)
    if run.foreign is not None:
        # Nothing is recorded: once the URL is fixed these transfers are due at once.
        run.summary.stopped = "provider_misconfigured"
    # Transient failures prove nothing either way; any other answer is the provider.
    run.provider_answered = any(not isinstance(r.answer, Transient) for r in results)
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


def _all_foreign(results: Sequence[_Looked]) -> ForeignAnswer | None:
    """The first answer when every answer of `results` came from something not the provider."""
    answers = [looked.answer for looked in results]
    if answers and all(isinstance(answer, ForeignAnswer) for answer in answers):
        first = answers[0]
        assert isinstance(first, ForeignAnswer)
        return first
    return None


def _hold(engine: Engine, owner: str, now: dt.datetime, ttl: float) -> None:
    # The lease runs on wall-clock time even when the pass's `now` is a test's fake clock.
    del now
    with write_session(engine) as session:
        hold_runner_lease(session, owner=owner, now=utcnow(), ttl=ttl)


def _drop(engine: Engine, owner: str) -> None:
    with write_session(engine) as session:
        release_runner_lease(session, owner=owner)
