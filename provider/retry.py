"""When to try a request again, and how long to wait first (pure, no sleeping here)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import tenacity

from provider.errors import RateLimitedError, TransientError


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds asked for by a `Retry-After` header (delta-seconds or HTTP-date), or None."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter, for requests that are safe to repeat (GETs).

    A POST is never given to this policy: an initiation whose answer was lost may
    have moved money, and the provider rejects a reused reference (spec, Transfer),
    so the caller resolves it by looking the reference up.
    """

    max_retries: int = 3
    backoff: float = 0.5
    max_delay: float = 30.0
    # A 429 asking for longer than this is surfaced rather than slept through, so a
    # caller (the reconciler) can schedule the next attempt itself.
    max_retry_after: float = 60.0

    def gives_up(self, attempt: int, error: TransientError) -> bool:
        """True when there is to be no retry number `attempt + 1`."""
        if attempt >= self.max_retries:
            return True
        asked = error.retry_after if isinstance(error, RateLimitedError) else None
        return asked is not None and asked > self.max_retry_after

    def delay(self, attempt: int, error: TransientError, rand: Callable[[], float]) -> float | None:
        """Seconds to wait before retry number `attempt + 1`, or None to give up."""
        if self.gives_up(attempt, error):
            return None
        base = min(self.max_delay, self.backoff * 2.0**attempt)
        # "Equal jitter": never zero, so concurrent clients spread out but still back off.
        wait = base / 2 + rand() * base / 2
        if isinstance(error, RateLimitedError) and error.retry_after is not None:
            wait = max(wait, error.retry_after)
        return wait

    def controls(
        self,
        rand: Callable[[], float],
        on_retry: Callable[[int, TransientError, float], None],
    ) -> dict[str, Any]:
        """tenacity's `retry`, `stop`, `wait` and `before_sleep` for this policy.

        Only a TransientError is tried again; when the policy gives up, the error itself is
        raised (`reraise`), so callers see the provider's error tree and never tenacity's.
        `on_retry(attempt, error, delay)` runs before each wait.
        """

        def failure(state: tenacity.RetryCallState) -> tuple[int, TransientError]:
            # tenacity counts attempts from 1; the policy counts the retries made so far.
            error = state.outcome.exception() if state.outcome else None
            assert isinstance(error, TransientError)  # `retry` lets nothing else through
            return state.attempt_number - 1, error

        def stop(state: tenacity.RetryCallState) -> bool:
            return self.gives_up(*failure(state))

        def wait(state: tenacity.RetryCallState) -> float:
            attempt, error = failure(state)
            return self.delay(attempt, error, rand) or 0.0  # 0.0 only where `stop` gives up

        def before_sleep(state: tenacity.RetryCallState) -> None:
            on_retry(*failure(state), state.upcoming_sleep)

        return {
            "retry": tenacity.retry_if_exception_type(TransientError),
            "stop": stop,
            "wait": wait,
            "before_sleep": before_sleep,
            "reraise": True,
        }
