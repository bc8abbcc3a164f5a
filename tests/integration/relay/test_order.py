"""Order per subject (PRODUCT.md: Relay): a hypothesis state machine over real deliveries."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from sqlalchemy import Engine, update
from starlette.responses import Response

from ledger.db import write_session
from ledger.events.outbox import ENDPOINTS
from tests.support import relay as support
from tests.support.relay import Consumer

PATHS = ("/hook", "/other")
SUBJECTS = 3


def test_each_consumer_sees_each_subjects_events_in_sequence_order(engine: Engine) -> None:
    """Events for several subjects, consumer failures injected at random: every consumer gets
    each subject's events in sequence order, the next only after the previous got a 2xx."""
    consumer = Consumer()
    answers: dict[int, int] = {}  # the consumer's n-th request -> the status it answered
    failing = dict.fromkeys(PATHS, 0)

    def respond(path: str, count: int) -> Response:
        status = 200
        if failing[path] > 0:
            failing[path] -= 1
            status = 503
        answers[count] = status
        return Response(status_code=status)

    consumer.respond = respond

    with support.serving(consumer) as url:

        class OrderMachine(RuleBasedStateMachine):
            """Emit, fail, deliver; the consumers' view must keep each subject in order."""

            def __init__(self) -> None:
                super().__init__()
                consumer.received.clear()
                answers.clear()
                failing.update(dict.fromkeys(PATHS, 0))
                self.endpoints = [support.add_endpoint(engine, f"{url}{p}")[0] for p in PATHS]
                self.transfers = support.add_transfers(engine, SUBJECTS)
                self.emitted: dict[int, int] = defaultdict(int)  # transfer id -> events

            @rule(subject=st.integers(0, SUBJECTS - 1), count=st.integers(1, 3))
            def emit(self, subject: int, count: int) -> None:
                """The ledger writes `count` events about one subject."""
                transfer = self.transfers[subject]
                support.emit_events(engine, [transfer], rounds=count)
                self.emitted[transfer] += count

            @rule(path=st.sampled_from(PATHS), count=st.integers(1, 3))
            def fail_next(self, path: str, count: int) -> None:
                """The consumer at `path` answers 503 to its next `count` requests."""
                failing[path] += count

            @rule()
            def deliver(self) -> None:
                """A worker delivers what is due now."""
                asyncio.run(support.worker(engine, schedule=(0.0,) * 100).once())

            @invariant()
            def in_order(self) -> None:
                """Per path and subject: sequences never go back, and n+1 follows a 2xx of n."""
                with consumer.lock:
                    seen = list(enumerate(consumer.received, start=1))
                done: dict[tuple[str, str], int] = defaultdict(int)  # last sequence with 2xx
                for number, item in seen:
                    key = (item.path, item.subject)
                    assert item.verified is False  # no secrets given: just a body check
                    assert item.sequence <= done[key] + 1, (key, item.sequence, done[key])
                    if answers.get(number) == 200 and item.sequence == done[key] + 1:
                        done[key] = item.sequence

            def teardown(self) -> None:
                try:
                    for _ in range(50):
                        if not any(failing.values()) and _all_sent(self):
                            break
                        asyncio.run(support.worker(engine, schedule=(0.0,) * 100).once())
                        failing.update(dict.fromkeys(PATHS, 0))
                    self.in_order()
                    assert _all_sent(self)
                finally:
                    # The next example's worker must not see this one's endpoints.
                    with write_session(engine) as session:
                        session.execute(
                            update(ENDPOINTS)
                            .where(ENDPOINTS.c.id.in_(self.endpoints))
                            .values(enabled=False)
                        )

        def _all_sent(machine: OrderMachine) -> bool:
            with consumer.lock:
                seen = list(enumerate(consumer.received, start=1))
            best: dict[tuple[str, str], int] = defaultdict(int)
            for number, item in seen:
                if answers.get(number) == 200:
                    key = (item.path, item.subject)
                    best[key] = max(best[key], item.sequence)
            return all(
                best[(path, f"ref-{transfer}")] == count
                for transfer, count in machine.emitted.items()
                for path in PATHS
            )

        run_state_machine_as_test(
            OrderMachine,
            settings=settings(max_examples=25, stateful_step_count=12, deadline=None),
        )
