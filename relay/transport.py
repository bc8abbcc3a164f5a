"""The seam between the worker and a destination: send one job, get its Outcome.

The worker claims, sends and records (relay.claims, .worker, .attempts); how an event reaches
an endpoint is a transport's business, one module per kind of destination in
`relay/transports/`: an HTTP POST, a RabbitMQ publish awaiting its confirm, a JetStream
publish awaiting its ack, a Redis XADD. A transport never raises out of `send` and never
holds it past the attempt's timeout: whatever went wrong is an Outcome with an error.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import Protocol

from relay.claims import Job

# Statuses whose Retry-After is honoured (docs/rules.md: Relay).
RETRY_AFTER_STATUSES = frozenset({429, 503})
# The most of an error's text kept with the attempt.
MAX_ERROR = 500


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt got: an HTTP status code, a broker's confirmation, or the error text
    of a failure to get either."""

    attempted_at: dt.datetime
    duration_ms: int
    status_code: int | None = None
    error: str | None = None
    head: str | None = None  # the first KiB of the answer's body, or what the broker said
    retry_after: float | None = None  # seconds, from a 429/503's Retry-After
    confirmed: bool = False  # a broker confirmed the publish (ack, confirm, stream id)

    @property
    def ok(self) -> bool:
        """A 2xx or a broker's confirmation: the event is delivered."""
        if self.error is not None:
            return False
        if self.confirmed:
            return True
        return self.status_code is not None and 200 <= self.status_code < 300


class Transport(Protocol):
    """One kind of destination: sends one job, and closes what it holds."""

    async def send(self, job: Job) -> Outcome:
        """Deliver the job's event, signed for its endpoint; what came of it (never raises)."""
        ...

    async def aclose(self) -> None:
        """Close every connection it holds (the worker stops)."""
        ...


class Clock:
    """When an attempt started, and the Outcome of what it got (duration measured)."""

    __slots__ = ("_started", "attempted_at")

    def __init__(self) -> None:
        self.attempted_at = dt.datetime.now(dt.UTC)
        self._started = time.monotonic()

    def outcome(
        self,
        *,
        status_code: int | None = None,
        error: str | None = None,
        head: str | None = None,
        retry_after: float | None = None,
        confirmed: bool = False,
    ) -> Outcome:
        """The Outcome, its duration from the start to now."""
        duration = int((time.monotonic() - self._started) * 1000)
        return Outcome(
            self.attempted_at, duration, status_code, error, head, retry_after, confirmed
        )


def text(raw: bytes | str, limit: int) -> str:
    """At most `limit` characters of `raw` as storable text (PostgreSQL's text holds no NUL)."""
    value = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    return value[:limit].replace("\x00", "\ufffd")


def error_text(exc: BaseException) -> str:
    """An exception as the error of an attempt: its type and message, bounded."""
    detail = str(exc).strip()
    name = type(exc).__name__
    return text(f"{name}: {detail}" if detail else name, MAX_ERROR)
