"""Asking the provider about due references, concurrently and under the rate cap: the part of
a pass every book shares. Every answer becomes a `reconcile.answers.LookupAnswer`."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import structlog

from ledger.checks import CheckResult, CheckRow
from ledger.events.types import Subject
from ledger.types import PROVIDER_STATUSES, TransferStatus
from provider.errors import (
    AuthenticationError,
    ForeignAnswerError,
    NotFoundError,
    ProviderError,
    RateLimitedError,
    TransientError,
)
from reconcile.answers import Found, LookupAnswer, NotFound, Transient, Uninterpretable
from reconcile.ratelimit import TokenBucket
from telemetry.tracing import span

logger = structlog.get_logger(__name__)

# The client methods that look one reference up (spec endpoints 7 and 6).
TRANSACTION = "get_transaction"
COLLECTION = "get_collection"


class TransactionLookup(Protocol):
    """The seam to the provider: AsyncProviderClient satisfies it."""

    async def get_transaction(self, reference: str) -> Any: ...


@dataclass(frozen=True)
class Target:
    """A claimed row (transfer or collection) and the reference it is looked up by."""

    id: int
    lookup_reference: str


@dataclass(frozen=True)
class ForeignAnswer(Transient):
    """Something that is not the provider answered (docs/rules.md, Provider misconfiguration).

    To the pure core it is a provider error like any transient one (no finding, checked
    again later, never a "not found"); the pass counts it apart and stops when it is all
    it got.
    """

    url: str = ""


def answer_of(result: Any) -> Found | Uninterpretable:
    """A provider Transaction as the core's `Found` (or Uninterpretable when it is odd)."""
    try:
        status = TransferStatus(str(getattr(result.status, "value", result.status)))
        if status not in PROVIDER_STATUSES:  # `reversed` is ours, never the provider's word
            raise ValueError(status)
    except ValueError:
        return Uninterpretable(f"unknown transaction status {result.status!r}")
    return Found(
        reference=result.reference,
        merchant_reference=result.merchant_reference,
        amount=result.amount,
        fee=result.fee,
        status=status,
        failure_reason=result.failure_reason,
        completed_at=getattr(result, "completed_at", None),
    )


async def lookup(
    client: Any, reference: str, *, method: str = TRANSACTION
) -> tuple[LookupAnswer, int | None]:
    """Ask the provider about one reference with the client's `method`; every failure but a
    refused key becomes an Answer. With it, the provider's HTTP status for the check row (None
    when no answer came)."""
    try:
        return answer_of(await getattr(client, method)(reference)), 200
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


class Looked(NamedTuple):
    """One target's answer and the HTTP status it came with."""

    target: Target
    answer: LookupAnswer
    http_status: int | None


async def lookups(
    client: Any,
    targets: Sequence[Target],
    semaphore: asyncio.Semaphore,
    bucket: TokenBucket,
    *,
    method: str = TRANSACTION,
) -> list[Looked]:
    """Every target's answer, at most the semaphore's lookups at once, under the bucket's rate."""

    async def one(target: Target) -> Looked:
        async with semaphore:
            await bucket.acquire()
            with span("reconcile.lookup", {"payrecon.reference": target.lookup_reference}):
                answer, status = await lookup(client, target.lookup_reference, method=method)
            return Looked(target, answer, status)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(t)) for t in targets]
    return [task.result() for task in tasks]


def check_row(looked: Looked, now: dt.datetime, *, subject: Subject) -> CheckRow:
    """The provider check a lookup leaves in the ledger about the looked-up `subject`."""
    owner: dict[str, Any] = {"subject": subject, "subject_id": looked.target.id}
    answer, http_status = looked.answer, looked.http_status
    if isinstance(answer, Found):
        return CheckRow(
            checked_at=now,
            http_status=http_status,
            result=CheckResult.FOUND,
            provider_status=answer.status.value,
            amount=answer.amount,
            fee=answer.fee,
            error=answer.failure_reason and f"failure reason: {answer.failure_reason}",
            **owner,
        )
    if isinstance(answer, NotFound):
        return CheckRow(
            checked_at=now, http_status=http_status, result=CheckResult.NOT_FOUND, **owner
        )
    result = CheckResult.TRANSIENT if isinstance(answer, Transient) else CheckResult.UNINTERPRETABLE
    return CheckRow(
        checked_at=now, http_status=http_status, result=result, error=answer.detail, **owner
    )


def all_foreign(results: Sequence[Looked]) -> ForeignAnswer | None:
    """The first answer when every answer of `results` came from something not the provider."""
    answers = [looked.answer for looked in results]
    if answers and all(isinstance(answer, ForeignAnswer) for answer in answers):
        first = answers[0]
        assert isinstance(first, ForeignAnswer)
        return first
    return None
