"""Asking the provider about due references, concurrently and under the rate cap: the part of
a pass transfers and collections share. Every answer becomes a `reconcile.checks.Answer`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from ledger.types import TransferStatus
from provider.errors import (
    AuthenticationError,
    ForeignAnswerError,
    NotFoundError,
    ProviderError,
    RateLimitedError,
    TransientError,
)
from reconcile.checks import Answer, Found, NotFound, Transient, Uninterpretable
from reconcile.ratelimit import TokenBucket

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
        completed_at=getattr(result, "completed_at", None),
    )


async def lookup(client: Any, reference: str, *, method: str = TRANSACTION) -> Answer:
    """Ask the provider about one reference with the client's `method`; every failure but a
    refused key becomes an Answer."""
    try:
        return answer_of(await getattr(client, method)(reference))
    except AuthenticationError:
        raise
    except NotFoundError:
        return NotFound()
    except ForeignAnswerError as exc:
        return ForeignAnswer(exc.message, url=exc.url)
    except RateLimitedError as exc:
        return Transient(exc.message, retry_after=exc.retry_after)
    except TransientError as exc:
        return Transient(exc.message)
    except ProviderError as exc:
        return Uninterpretable(f"{type(exc).__name__}: {exc.message}")
    except Exception as exc:  # a bug below us must not stop the pass; the check is retried
        logger.exception("lookup_crashed", reference=reference)
        return Transient(f"{type(exc).__name__}: {exc}")


async def lookups(
    client: Any,
    targets: Sequence[Target],
    semaphore: asyncio.Semaphore,
    bucket: TokenBucket,
    *,
    method: str = TRANSACTION,
) -> list[tuple[Target, Answer]]:
    """Every target's answer, at most the semaphore's lookups at once, under the bucket's rate."""

    async def one(target: Target) -> tuple[Target, Answer]:
        async with semaphore:
            await bucket.acquire()
            return target, await lookup(client, target.lookup_reference, method=method)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(t)) for t in targets]
    return [task.result() for task in tasks]


def all_foreign(results: Sequence[tuple[Target, Answer]]) -> ForeignAnswer | None:
    """The first answer when every answer of `results` came from something not the provider."""
    answers = [answer for _, answer in results]
    if answers and all(isinstance(answer, ForeignAnswer) for answer in answers):
        first = answers[0]
        assert isinstance(first, ForeignAnswer)
        return first
    return None
