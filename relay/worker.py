"""The delivery worker: a loop of claim → send → record (relay.claims, .transport, .attempts).

Claims keep a window of claimed deliveries (in flight or waiting for a slot) whose size follows
the pace of the answers (relay.window): when it is half empty the next claim is taken in the
background while attempts go on, so one claim transaction serves up to hundreds of attempts
and its round trips hide behind them. Answers waiting to be recorded do not fill the window
(they need no slot), but a window's worth of them holds the next claim back until the ledger
catches up. Attempts run concurrently, and answers are recorded as
they come, several per transaction. A claim that comes back short marks the ledger dry: the
next waits for a record (which may let a subject's next event go), a wake-up or the poll
interval. A waiting delivery whose claim would end before its attempt could is not sent (its
claim expires and it is due again); at a stop, the waiting ones are released. An idle worker
sleeps until a NOTIFY (PostgreSQL, relay.wakeup), the next poll (SQLite), the next retry due,
or a stop. A stop ends claiming; attempts in flight finish and are recorded before `run`
returns. Alerts go through the `alert` callable the composition root gives (one per key).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime as dt
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import structlog
from sqlalchemy import Engine

from ledger.db import read_session, write_session
from ledger.lease import hold_lease, new_owner, release_lease
from relay import claims, wakeup
from relay.addresses import Network
from relay.attempts import Result
from relay.claims import RELAY_LEASE, Job
from relay.keys import SecretBox
from relay.metrics import WorkerMetrics
from relay.recorder import AlertFn, Recorder, RecordSettings, Summary
from relay.transport import Transport
from relay.transports.router import Router
from relay.window import ClaimWindow
from telemetry import tracing

logger = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """The worker's settings (PAYRECON_RELAY_*), in seconds."""

    schedule: tuple[float, ...]
    timeout: float = 15.0
    concurrency: int = 16
    disable_after: float = 432000.0
    # How often an idle worker looks for work without a NOTIFY (SQLite has none; on
    # PostgreSQL this only covers a lost listener or claims of a dead peer expiring).
    sqlite_poll: float = 0.25
    postgres_poll: float = 2.0
    # A claim outlives the attempt's timeout by this much, for recording it.
    claim_margin: float = 5.0
    # PAYRECON_RELAY_ALLOW_NETWORKS: own-host addresses endpoints may still resolve to.
    allow: tuple[Network, ...] = ()

    @property
    def claim_ttl(self) -> float:
        """Seconds a claim (and the SQLite lease) lasts."""
        return self.timeout + self.claim_margin


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class Worker:
    """One delivery worker on one ledger."""

    engine: Engine
    box: SecretBox
    config: WorkerConfig
    alert: AlertFn
    owner: str = field(default_factory=new_owner)
    summary: Summary = field(default_factory=Summary)
    metrics: WorkerMetrics | None = None  # `relay run --metrics-port` only
    # Where jobs go: by default a Router to each endpoint's kind (relay.transports); tests of
    # the worker itself may give an in-memory one. Closed when the worker returns.
    transport: Transport | None = None

    def __post_init__(self) -> None:
        self._sqlite = self.engine.dialect.name == "sqlite"
        self._lease_until: dt.datetime | None = None
        # What writes the answers back while the loop claims and sends (made at each run, with
        # the metrics set by then).
        self._recorder: Recorder | None = None
        # The claim under way beside the attempts (one at a time), and (batches recorded,
        # when) as a claim came back short: nothing more was due then.
        self._claiming: asyncio.Task[list[Job]] | None = None
        self._short: tuple[int, float] | None = None
        # SQLite takes one writer at a time, and a second one sleeps in its busy handler (1, 2,
        # 5 ms…): the worker's own writes (a claim beside a record) queue on a lock instead.
        self._write_lock = threading.Lock()
        # Attempts that finished since the loop last looked, and what it waits on for the next:
        # each attempt's task reports itself (a done callback) instead of the loop waiting on
        # every task in flight, which cost a callback added and removed per task per turn.
        self._finished: list[asyncio.Task[Result]] = []
        self._progress: asyncio.Future[None] | None = None

    async def run(self, stop: asyncio.Event) -> Summary:
        """Deliver until `stop` is set; then finish the attempts in flight and return."""
        wake = asyncio.Event()
        listener = None
        if not self._sqlite:
            listener = asyncio.create_task(wakeup.listen(self.engine, wake, stop))
        try:
            await self._loop(stop=stop, wake=wake, due_by=None)
        finally:
            self._abandon_claim()
            if listener is not None:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listener
            await asyncio.to_thread(self._release)
        return self.summary

    async def once(self) -> Summary:
        """Deliver every attempt due now (and those its deliveries unblock), then return.

        On SQLite the lease must be free: LeaseHeldError (ledger.errors) when a worker runs.
        """
        started = _now()
        if self._sqlite:
            await asyncio.to_thread(self._hold_lease)
        try:
            await self._loop(stop=None, wake=None, due_by=started)
        finally:
            self._abandon_claim()
            await asyncio.to_thread(self._release)
        self.summary.pending = await asyncio.to_thread(self._pending)
        return self.summary

    # The loop ------------------------------------------------------------------------------

    async def _loop(
        self, *, stop: asyncio.Event | None, wake: asyncio.Event | None, due_by: dt.datetime | None
    ) -> None:
        config = self.config
        inflight: set[asyncio.Task[Result]] = set()
        waiting: collections.deque[Job] = collections.deque()
        window = ClaimWindow(config.concurrency, config.claim_margin, now=time.monotonic())
        recorder = self._recorder = Recorder(
            self.engine,
            RecordSettings(
                owner=self.owner,
                schedule=config.schedule,
                disable_after=config.disable_after,
                concurrency=config.concurrency,
                writing=self._writing,
            ),
            alert=self.alert,
            summary=self.summary,
            metrics=self.metrics,
        )
        transport = self.transport
        if transport is None:
            router = Router(
                self.box, timeout=config.timeout, concurrency=config.concurrency, allow=config.allow
            )
            tracing.propagate_from(router.http.client)  # the attempt's traceparent, over HTTP
            transport = router
        async with contextlib.aclosing(transport):
            while True:
                stopping = stop is not None and stop.is_set()
                if self._claiming is not None and self._claiming.done():
                    waiting.extend(self._claiming.result())
                    self._claiming = None
                if stopping:
                    await self._give_up_claims(waiting)
                elif self._claiming is None and not self._dry(wake):
                    # The window counts the claims that need a slot (waiting or in flight).
                    # Answers not yet recorded hold claims too but need none: they hold the
                    # next claim back only once a window's worth waits for the ledger.
                    limit = 0
                    if recorder.unrecorded < window.size:
                        limit = window.wanted(len(inflight) + len(waiting), time.monotonic())
                    if limit:
                        if wake is not None:
                            wake.clear()  # a NOTIFY from here on wakes the next wait
                        self._claiming = asyncio.create_task(self._claim_ahead(limit, due_by))
                self._start(transport, waiting, inflight)
                if not inflight:
                    if self._claiming is not None:
                        await asyncio.wait({self._claiming})
                        continue
                    if recorder.busy():
                        await recorder.flush()
                        continue  # what it recorded may let a subject's next event go
                    if stop is None or stopping:
                        return  # `once` found nothing more due, or a stop with nothing left
                    await self._idle(stop, wake)
                    self._short = None
                    window.restart(time.monotonic())
                    continue
                if not self._finished:
                    await self._wait_for_progress(stop, wake, stopping)
                done, self._finished = self._finished, []
                if done:
                    inflight.difference_update(done)
                    window.answered(len(done), time.monotonic())
                    recorder.hand_over([task.result() for task in done])

    async def _wait_for_progress(
        self, stop: asyncio.Event | None, wake: asyncio.Event | None, stopping: bool
    ) -> None:
        """Until an attempt finishes, the claim under way comes back, or the poll interval."""
        self._progress = asyncio.get_running_loop().create_future()
        waits: set[asyncio.Future[Any]] = {self._progress}
        if self._claiming is not None:
            waits.add(self._claiming)  # its jobs start as soon as it is back
        extra: list[asyncio.Future[Any]] = []
        if not stopping and stop is not None and self._dry(wake):
            # Nothing more was due: wake for new work, a stop, or a record that may let a
            # subject's next event go, while slow attempts are in flight.
            extra = [asyncio.ensure_future(stop.wait())]
            if wake is not None:
                extra.append(asyncio.ensure_future(wake.wait()))
            recording = self._recorder.task if self._recorder is not None else None
            if recording is not None and not recording.done():
                waits.add(recording)
            waits.update(extra)
        try:
            await asyncio.wait(waits, timeout=self._poll(), return_when="FIRST_COMPLETED")
        finally:
            self._progress = None
            for future in extra:
                future.cancel()

    async def _claim_ahead(self, limit: int, due_by: dt.datetime | None) -> list[Job]:
        """A claim run beside the attempts in flight (the ledger's round trips hidden behind
        them); a short one marks the ledger dry until a record, a wake-up or the next poll."""
        records = self._batches()
        jobs = await self._claim(limit, due_by)
        self._short = (records, time.monotonic()) if len(jobs) < limit else None
        return jobs

    def _batches(self) -> int:
        # Batches recorded so far: a record may let a subject's next event go.
        return self._recorder.batches if self._recorder is not None else 0

    def _dry(self, wake: asyncio.Event | None) -> bool:
        # The last claim took all that was due: claiming again before a record (which may let
        # a subject's next event go), a NOTIFY or the poll interval would find nothing.
        if self._short is None or (wake is not None and wake.is_set()):
            return False
        records, when = self._short
        return records == self._batches() and time.monotonic() - when < self._poll()

    def _abandon_claim(self) -> None:
        # Only when the loop itself was cancelled or failed (it returns with no claim under
        # way): the claim's deliveries are not released, they expire, as after a crash.
        if self._claiming is not None:
            self._claiming.cancel()
            self._claiming = None

    async def _give_up_claims(self, waiting: collections.deque[Job]) -> None:
        # A stop: a claim under way is waited for, and whatever is claimed but not sent is
        # released (due again at once, for a peer or the next run).
        if self._claiming is not None:
            waiting.extend(await self._claiming)
            self._claiming = None
        if waiting:
            unsent = [job.delivery_id for job in waiting]
            await asyncio.to_thread(self._release_claims, unsent)
            waiting.clear()

    def _start(
        self,
        transport: Transport,
        waiting: collections.deque[Job],
        inflight: set[asyncio.Task[Result]],
    ) -> None:
        """Start waiting attempts while slots are free; drop one whose claim would end first."""
        while waiting and len(inflight) < self.config.concurrency:
            job = waiting.popleft()
            if _now() + dt.timedelta(seconds=self.config.timeout) >= job.claimed_until:
                # Its record would be refused, and another worker may claim it meanwhile.
                logger.debug("relay_claim_too_old", delivery_id=job.delivery_id)
                continue
            task = asyncio.create_task(self._attempt(transport, job))
            task.add_done_callback(self._on_finished)
            inflight.add(task)

    def _on_finished(self, task: asyncio.Task[Result]) -> None:
        self._finished.append(task)
        if self._progress is not None and not self._progress.done():
            self._progress.set_result(None)

    def _writing(self) -> contextlib.AbstractContextManager[Any]:
        return self._write_lock if self._sqlite else contextlib.nullcontext()

    async def _claim(self, limit: int, due_by: dt.datetime | None) -> list[Job]:
        if self._sqlite and lease_due(self._lease_until, self.config.claim_ttl):
            try:
                await asyncio.to_thread(self._hold_lease)
            except Exception as exc:  # another runner holds it, or the ledger is down
                logger.debug("relay_lease_not_held", error=str(exc))
                self._lease_until = None
                return []
        try:
            return await asyncio.to_thread(self._claim_now, limit, due_by)
        except Exception:
            # A ledger that is down for a moment must not end the worker: try again later.
            logger.exception("relay_claim_failed")
            return []

    def _claim_now(self, limit: int, due_by: dt.datetime | None) -> list[Job]:
        now = _now()
        with self._writing(), write_session(self.engine) as session:
            return claims.claim(
                session,
                owner=self.owner,
                now=now,
                ttl=self.config.claim_ttl,
                limit=limit,
                due_by=due_by,
            )

    async def _attempt(self, transport: Transport, job: Job) -> Result:
        # A child of the span its event was written in (the webhook's request, the reconcile
        # pass…): one trace from the change to the consumer, who gets this span's traceparent.
        parent = tracing.continued(job.traceparent)
        with tracing.span("relay.attempt", _attempt_attributes(job), kind="CLIENT", context=parent):
            answer = await transport.send(job)
        return Result(job, answer)

    # Waiting ------------------------------------------------------------------------------

    def _poll(self) -> float:
        return self.config.sqlite_poll if self._sqlite else self.config.postgres_poll

    async def _idle(self, stop: asyncio.Event, wake: asyncio.Event | None) -> None:
        delay = self._poll()
        if not self._sqlite:
            with contextlib.suppress(Exception):
                when = await asyncio.to_thread(self._next_due)
                if when is not None:
                    delay = min(delay, max(0.01, (when - _now()).total_seconds()))
        waits = [asyncio.ensure_future(stop.wait())]
        if wake is not None:
            waits.append(asyncio.ensure_future(wake.wait()))
        await asyncio.wait(waits, timeout=delay, return_when="FIRST_COMPLETED")
        for future in waits:
            future.cancel()

    def _next_due(self) -> dt.datetime | None:
        with read_session(self.engine) as session:
            return claims.next_due(session, now=_now())

    def _pending(self) -> int:
        with read_session(self.engine) as session:
            return claims.pending_count(session)

    def _release_claims(self, delivery_ids: list[int]) -> None:
        try:
            with self._writing(), write_session(self.engine) as session:
                claims.release(session, owner=self.owner, delivery_ids=delivery_ids)
        except Exception:  # the claims then expire on their own: nothing is lost
            logger.exception("relay_release_failed", deliveries=len(delivery_ids))

    # The SQLite lease ---------------------------------------------------------------------

    def _hold_lease(self) -> None:
        with self._writing(), write_session(self.engine) as session:
            self._lease_until = hold_lease(
                session, RELAY_LEASE, owner=self.owner, now=_now(), ttl=self.config.claim_ttl
            )

    def _release(self) -> None:
        if not self._sqlite or self._lease_until is None:
            return
        with contextlib.suppress(Exception), self._writing(), write_session(self.engine) as session:
            release_lease(session, RELAY_LEASE, owner=self.owner)
        self._lease_until = None


def _attempt_attributes(job: Job) -> dict[str, Any] | None:
    # Built only while tracing is on: a delivery pays nothing for it otherwise.
    if not tracing.enabled():
        return None
    return {
        "payrecon.delivery_id": job.delivery_id,
        "payrecon.endpoint_id": job.endpoint.id,
        "payrecon.event_id": job.event_id,
        "payrecon.attempt": job.attempts + 1,
        "payrecon.subject": job.subject_key,
    }


def lease_due(until: dt.datetime | None, ttl: float) -> bool:
    """True when the lease is not held or a third of its time is gone (renew it)."""
    return until is None or (until - _now()).total_seconds() < ttl * 2 / 3
