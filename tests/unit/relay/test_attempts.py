"""What an attempt leads to: the pure verdict on (attempt number, answer)."""

from __future__ import annotations

import datetime as dt

import pytest

from ledger.events.types import AttemptOutcome
from relay.attempts import describe, verdict
from relay.transport import Outcome

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)
SCHEDULE = (1.0, 10.0)


def answer(
    status: int | None = None, *, error: str | None = None, retry_after: float | None = None
) -> Outcome:
    """An answer at NOW."""
    return Outcome(NOW, 5, status_code=status, error=error, retry_after=retry_after)


@pytest.mark.parametrize("status", [200, 201, 204, 299])
def test_any_2xx_is_delivered(status: int) -> None:
    """Every 2xx delivers, whatever attempt it was."""
    assert verdict(3, answer(status), SCHEDULE) == (AttemptOutcome.DELIVERED, None)


@pytest.mark.parametrize("status", [199, 301, 302, 400, 404, 500])
def test_anything_else_is_retried_on_the_schedule(status: int) -> None:
    """1xx, 3xx (never followed), 4xx and 5xx are retried after the schedule's delay."""
    assert verdict(1, answer(status), SCHEDULE) == (AttemptOutcome.RETRY, 1.0)
    assert verdict(2, answer(status), SCHEDULE) == (AttemptOutcome.RETRY, 10.0)


def test_the_attempt_after_the_schedule_fails_for_good() -> None:
    """Attempt len(schedule) + 1 failing ends the delivery."""
    assert verdict(3, answer(500), SCHEDULE) == (AttemptOutcome.FAILED, None)
    assert verdict(3, answer(error="ConnectError"), SCHEDULE) == (AttemptOutcome.FAILED, None)


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured_on_429_and_503(status: int) -> None:
    """A 429/503 waits its Retry-After when longer than the schedule's delay."""
    assert verdict(1, answer(status, retry_after=30.0), SCHEDULE) == (AttemptOutcome.RETRY, 30.0)


def test_retry_after_is_ignored_on_other_statuses() -> None:
    """A 500's Retry-After does not change the schedule."""
    assert verdict(1, answer(500, retry_after=30.0), SCHEDULE) == (AttemptOutcome.RETRY, 1.0)


def test_an_error_with_no_status_is_not_delivered() -> None:
    """A transport error is a failed attempt, described by its text."""
    failed = answer(error="ConnectError: no route")
    assert not failed.ok
    assert describe(failed) == "ConnectError: no route"
    assert describe(answer(503)) == "HTTP 503"
