"""The worker's recorder: answers written back in the background, several per transaction.

The delivery loop (relay.worker) hands over what each attempt got; the recorder writes them
with relay.attempts.record, one batch at a time, while the loop claims and sends. A batch waits
RECORD_GATHER seconds for company unless RECORD_MANY answers are there already. A ledger that
cannot take a batch is tried again four times over 7.5 s; after that the batch's claims expire
and its deliveries are sent again (at least once, never lost). After each batch it counts the
attempts (summary, metrics, logs) and sends the batch's alerts through `alert`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from sqlalchemy import Engine

from ledger.db import write_session
from ledger.events.types import AttemptOutcome
from relay.attempts import Notice, Result, describe, record
from relay.metrics import WorkerMetrics

logger = structlog.get_logger(__name__)

# Seconds answers gather before they are recorded together, unless RECORD_MANY came already.
# The next event of a subject waits for its predecessor's record, so this is the most it adds
# between a subject's events; the first event of a subject is not delayed.
RECORD_GATHER = 0.02
# Answers recorded at once without gathering longer. A record is a transaction whose cost
# hardly depends on its size: recording each concurrency's worth (16) as it came made a fast
# broker's worker spend more on transactions than on rows (bench/RESULTS.md section 19).
RECORD_MANY = 256

# alert(notices): sends each notice of one recorded batch unless its key went out already,
# grouped by kind when there are many (the composition root's reconcile.alerts.dispatch).
AlertFn = Callable[[Sequence[Notice]], None]


@dataclass
class Summary:
    """What a worker did: attempts, how many delivered and failed for good, pending after."""

    attempted: int = 0
    delivered: int = 0
    failed: int = 0
    pending: int = 0

    def as_dict(self) -> dict[str, int]:
        """The `relay once --json` object."""
        return {
            "attempted": self.attempted,
            "delivered": self.delivered,
            "failed": self.failed,
            "pending": self.pending,
        }


@dataclass
class RecordSettings:
    """How the recorder writes: the worker's owner, schedule and auto-disable, its concurrency,
    and the lock its writes take (SQLite: one writer at a time)."""

    owner: str
    schedule: tuple[float, ...]
    disable_after: float
    concurrency: int
    writing: Callable[[], contextlib.AbstractContextManager[Any]]


class Recorder:
    """Writes answers back in the background, one batch at a time."""

    def __init__(
        self,
        engine: Engine,
        settings: RecordSettings,
        *,
        alert: AlertFn,
        summary: Summary,
        metrics: WorkerMetrics | None,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.alert = alert
        self.summary = summary
        self.metrics = metrics
        self._answered: list[Result] = []
        self.task: asyncio.Task[None] | None = None  # the batch under way, if any
        # Batches recorded so far (a record may let a subject's next event go), and answers
        # not yet recorded: their claims are held too, and a window's worth of them holds the
        # worker's next claim back (relay.worker).
        self.batches = 0
        self.unrecorded = 0

    def busy(self) -> bool:
        """True while answers wait or a batch is being written."""
        return bool(self._answered) or (self.task is not None and not self.task.done())

    def hand_over(self, results: list[Result]) -> None:
        """Take answers to record; start writing unless a batch is under way."""
        self._answered.extend(results)
        self.unrecorded += len(results)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._record_all())

    async def flush(self) -> None:
        """Until every answer handed over is recorded (or given up)."""
        while self.task is not None and not self.task.done():
            await self.task

    async def _record_all(self) -> None:
        while self._answered:
            if len(self._answered) < max(RECORD_MANY, self.settings.concurrency):
                # Let answers gather for a moment instead of writing them a few at a time.
                await asyncio.sleep(RECORD_GATHER)
            batch, self._answered = self._answered, []
            await self._record(batch)
            self.unrecorded -= len(batch)
            self.batches += 1

    async def _record(self, results: list[Result]) -> None:
        for delay in (0.0, 0.5, 1.0, 2.0, 4.0):
            await asyncio.sleep(delay)
            try:
                outcomes, notices = await asyncio.to_thread(self._record_now, results)
                break
            except Exception:
                logger.exception("relay_record_failed", attempts=len(results))
        else:
            # The claims expire and the deliveries are sent again: at least once, never lost.
            return
        log = logger.bind()  # once per batch: the module's logger binds at every call
        for result, outcome in outcomes:
            self._count(result, outcome, log)
        if notices:
            await asyncio.to_thread(self._send_alerts, notices)

    def _record_now(
        self, results: list[Result]
    ) -> tuple[list[tuple[Result, AttemptOutcome]], list[Notice]]:
        settings = self.settings
        with settings.writing(), write_session(self.engine) as session:
            return record(
                session,
                results,
                owner=settings.owner,
                schedule=settings.schedule,
                disable_after=settings.disable_after,
                now=dt.datetime.now(dt.UTC),
            )

    def _count(self, result: Result, outcome: AttemptOutcome, log: Any) -> None:
        self.summary.attempted += 1
        self.summary.delivered += outcome is AttemptOutcome.DELIVERED
        self.summary.failed += outcome is AttemptOutcome.FAILED
        job, answer = result.job, result.answer
        if self.metrics is not None:
            self.metrics.attempted(job.endpoint.id, outcome.value, answer.duration_ms)
        say = log.debug if outcome is AttemptOutcome.DELIVERED else log.info
        say(
            "relay_attempt",
            delivery_id=job.delivery_id,
            endpoint_id=job.endpoint.id,
            event_id=job.event_id,
            attempt=job.attempts + 1,
            status_code=answer.status_code,
            error=answer.error,
            duration_ms=answer.duration_ms,
            outcome=outcome.value,
        )
        if outcome is AttemptOutcome.FAILED:
            log.warning(
                "relay_delivery_failed",
                delivery_id=job.delivery_id,
                endpoint_id=job.endpoint.id,
                event_id=job.event_id,
                last=describe(answer),
            )

    def _send_alerts(self, notices: list[Notice]) -> None:
        try:
            self.alert(notices)
        except Exception:  # a broken alert channel must not stop deliveries
            logger.exception("relay_alert_failed", keys=[notice.key for notice in notices])
