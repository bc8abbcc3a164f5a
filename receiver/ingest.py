"""Group commit: one writer per process batches concurrent deliveries into one transaction.

Each request waits for the commit of the batch holding its delivery, so a 200 still means
"on disk", but the fsync is shared (a durable commit per request caps throughput far lower).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from ledger.db import write_session
from ledger.errors import LedgerError
from ledger.types import utcnow
from receiver.apply import Applied, IncomingDelivery, apply_delivery
from receiver.batch import apply_batch
from receiver.errors import BatchRaceError, IngestUnavailableError
from telemetry import tracing

logger = structlog.get_logger(__name__)

# At most this long (seconds) spent gathering a batch, and the number of loop iterations
# without a new delivery after which the batch is cut.
DEFAULT_LINGER = 0.002
_QUIET_ROUNDS = 2


@dataclass
class _Pending:
    delivery: IncomingDelivery
    future: asyncio.Future[Applied]


def _outcome_counts(results: list[Applied | Exception]) -> dict[str, int]:
    """The batch span's per-request facts: how many of its deliveries had each outcome
    (`payrecon.outcome.<outcome>`; `unavailable` for those answered 503)."""
    counts: dict[str, int] = {}
    for result in results:
        name = "unavailable" if isinstance(result, Exception) else result.outcome.value
        key = f"payrecon.outcome.{name}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _order_key(item: _Pending) -> str:
    # Lock rows in a stable order so batches of two processes do not deadlock often;
    # the sort is stable, so deliveries for one reference keep their arrival order.
    parsed = item.delivery.parsed
    return (parsed.reference or "") if parsed is not None else ""


class GroupCommitWriter:
    """Owns the only write path of the webhook route in this process.

    `transactions` batches may be committing at once. One suits SQLite (a second would only
    wait for the write lock); on PostgreSQL a batch spends most of its time waiting on the
    server, so a second one in flight keeps the process busy meanwhile. Concurrent batches
    are safe as those of two receiver processes are: row locks, unique keys, and the
    per-delivery retry when one loses a race.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        batch_max: int = 256,
        linger: float = DEFAULT_LINGER,
        transactions: int = 1,
        on_batch: Callable[[int, float], None] | None = None,
    ) -> None:
        self.engine = engine
        self.batch_max = batch_max
        self.linger = linger
        self.transactions = transactions
        self._committing = 0  # batches handed to a thread and not yet settled
        self.on_batch = on_batch
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the writer task on the running loop."""
        self._task = asyncio.create_task(self._run(), name="group-commit-writer")

    async def stop(self) -> None:
        """Finish what is queued, then stop."""
        if self._task is None:
            return
        await self._queue.join()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def submit(self, delivery: IncomingDelivery) -> Applied:
        """Queue a delivery and wait until its batch is committed (or failed)."""
        if self._task is None or self._task.done():
            raise IngestUnavailableError("the receiver is not accepting deliveries")
        future: asyncio.Future[Applied] = asyncio.get_running_loop().create_future()
        pending = _Pending(delivery, future)
        self._queue.put_nowait(pending)  # unbounded: never waits
        return await future

    async def _run(self) -> None:
        slots = asyncio.Semaphore(self.transactions)
        in_flight: set[asyncio.Task[None]] = set()
        while True:
            first = await self._queue.get()
            # Wait for a free transaction first: the batch grows meanwhile.
            await slots.acquire()
            await self._gather()
            # With other transactions free, take a fair share and leave them the rest: two
            # half batches commit in parallel sooner than one whole batch.
            waiting = self._queue.qsize() + 1
            share = -(-waiting // (self.transactions - self._committing))
            batch = [first]
            while len(batch) < min(self.batch_max, share):
                try:
                    batch.append(self._queue.get_nowait())
                except asyncio.QueueEmpty:
                    break
            self._committing += 1
            task = asyncio.create_task(self._settle(batch, slots))
            in_flight.add(task)  # held here until done: the loop keeps only weak references
            task.add_done_callback(in_flight.discard)

    async def _settle(self, batch: list[_Pending], slots: asyncio.Semaphore) -> None:
        """Commit one batch in a worker thread and answer each of its deliveries."""
        # The webhook's one recorded span (docs/architecture.md, "Tracing the webhook"): one
        # per batch, no span per request. It links to the trace each sender named in its
        # `traceparent`, its relay events keep its context, and it counts the batch's outcomes.
        # Off, `span` is a shared no-op and nothing here looks at a delivery.
        try:
            started = time.perf_counter()
            links: list[Any] = []
            if tracing.enabled():
                links = tracing.links_to(item.delivery.traceparent for item in batch)
            attributes = {"payrecon.batch_size": len(batch)}
            with tracing.span("ingest.group_commit", attributes, links=links) as current:
                results = await asyncio.to_thread(self._commit, batch)
                if current is not None:
                    current.set_attributes(_outcome_counts(results))
            if self.on_batch is not None:
                self.on_batch(len(batch), time.perf_counter() - started)
        except Exception as exc:  # a bug, not the database: still answer every request
            results = [self._unavailable(exc) for _ in batch]
        try:
            for item, result in zip(batch, results, strict=True):
                if not item.future.done():
                    if isinstance(result, Exception):
                        item.future.set_exception(result)
                    else:
                        item.future.set_result(result)
        finally:
            self._committing -= 1
            slots.release()
            for _ in batch:
                self._queue.task_done()

    async def _gather(self) -> None:
        """Let the loop take in the requests that have already arrived before cutting a batch.

        Requests read from their sockets in this loop iteration reach the queue one or two
        iterations later. Yielding until the queue stops growing (within `linger` seconds)
        makes batches as large as the load allows: each commit's fsync is then shared by more
        deliveries, and while the loop has work the wait costs nothing.
        """
        deadline = time.perf_counter() + self.linger
        size = -1
        quiet = 0
        while quiet < _QUIET_ROUNDS and self._queue.qsize() < self.batch_max:
            if time.perf_counter() >= deadline:
                return
            await asyncio.sleep(0)
            quiet = quiet + 1 if self._queue.qsize() == size else 0
            size = self._queue.qsize()

    def _commit(self, batch: list[_Pending]) -> list[Applied | Exception]:
        """Commit the batch in one transaction; on failure retry each delivery on its own."""
        ordered = sorted(batch, key=_order_key)
        try:
            results = self._batch([item.delivery for item in ordered])
        except LedgerError as exc:
            # The database is unreachable or refused the write: every delivery gets 503.
            return [self._unavailable(exc) for _ in batch]
        except (SQLAlchemyError, BatchRaceError) as exc:
            # A race with another process, a deadlock or one bad delivery (a value the driver
            # cannot encode, which ledger.bulk reports as SQLAlchemy's StatementError) must not
            # fail its neighbours: fall back to the per-delivery path, one transaction each.
            logger.warning(
                "batch failed; retrying deliveries one by one",
                size=len(batch),
                error=type(exc).__name__,
            )
            return [self._single(item.delivery) for item in batch]
        by_item = {id(item): result for item, result in zip(ordered, results, strict=True)}
        return [by_item[id(item)] for item in batch]

    def _single(self, delivery: IncomingDelivery) -> Applied | Exception:
        try:
            return self._transaction([delivery])[0]
        except (SQLAlchemyError, LedgerError, IngestUnavailableError, UnicodeEncodeError) as exc:
            # UnicodeEncodeError: a value the driver cannot encode (an unpaired surrogate); the
            # driver raises it itself, outside SQLAlchemy's translation of its errors.
            return self._unavailable(exc)

    def _batch(self, deliveries: list[IncomingDelivery]) -> list[Applied]:
        now = utcnow()
        with write_session(self.engine) as session:
            return apply_batch(session, deliveries, now=now)

    def _transaction(self, deliveries: list[IncomingDelivery]) -> list[Applied]:
        now = utcnow()
        with write_session(self.engine) as session:
            return [apply_delivery(session, delivery, now=now) for delivery in deliveries]

    @staticmethod
    def _unavailable(exc: Exception) -> Exception:
        logger.error("delivery not committed", error=type(exc).__name__, detail=str(exc)[:300])
        return IngestUnavailableError("the ledger could not store the delivery; retry later")
