"""An in-process destination for tests whose point is the worker, not the consumer: every job
is kept (with its signed headers), and `refuse(job)` says which attempts fail."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from relay import signing
from relay.claims import Job
from relay.errors import RelayError
from relay.keys import SecretBox
from relay.transport import Clock, Outcome


@dataclass
class Sent:
    """One job the memory transport took or refused."""

    job: Job
    headers: dict[str, str]
    accepted: bool


@dataclass
class MemoryTransport:
    """Takes each job in memory; `refuse(job)` returning an error text fails that attempt."""

    box: SecretBox
    refuse: Callable[[Job], str | None] = lambda job: None
    delay: float = 0.0
    sent: list[Sent] = field(default_factory=list)
    closed: bool = False

    async def send(self, job: Job) -> Outcome:
        """Keep the job (or refuse it); never raises."""
        clock = Clock()
        try:
            headers = signing.job_headers(job, self.box, clock.attempted_at)
        except RelayError as exc:
            return clock.outcome(error=f"not signed: {exc}")
        if self.delay:
            await asyncio.sleep(self.delay)
        refusal = self.refuse(job)
        self.sent.append(Sent(job, headers, refusal is None))
        if refusal is not None:
            return clock.outcome(error=refusal)
        return clock.outcome(confirmed=True, head="kept in memory")

    async def aclose(self) -> None:
        """Nothing to close; remembers that it was asked."""
        self.closed = True
