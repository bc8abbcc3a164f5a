"""Intent first: the protocol every money movement payrecon starts follows (payouts, collections).

The intent row is committed before the provider is called; the provider is called once; its
answer is recorded in a second transaction. Whatever dies in between, the reconciler only
ever *looks the reference up*, never calls again, so money moves at most once
(docs/architecture.md, "The subject model"; README: payouts and collections). What to send,
what to write and how each answer is recorded is the movement's (`Movement`); the order, the
failpoints and how a provider error is classified are here, once.

Test-only failpoints: `PAYRECON_FAILPOINT=NAME` kills the process (`os._exit(137)`) at the
point of that name: right after the intent commits, or right after the provider accepted and
before the answer is recorded.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from sqlalchemy import Engine
from sqlmodel import Session

from ledger.db import write_session
from ledger.models import Collection, Transfer
from ledger.types import Initiation, TransferStatus
from provider.errors import DuplicateReferenceError, ProviderError

INTENT_GRACE_SECONDS = 60.0  # longer than one initiation call can take (timeout, no retry)
FAILPOINT_ENV = "PAYRECON_FAILPOINT"

# Extra writes that belong to the intent's transaction (the audit log's row for the movement).
OnIntent = Callable[[Session], None]

# The rows a movement writes: a payout's transfer or a collection.
Moved = Transfer | Collection

Result = TypeVar("Result", covariant=True)
R = TypeVar("R")


def failpoint(name: str) -> None:
    """Kill the process here when PAYRECON_FAILPOINT names this point (tests only)."""
    # Read at the instant, not at import: a test sets it for one subprocess only.
    if os.environ.get(FAILPOINT_ENV) == name:
        os._exit(137)


class Movement(Protocol[Result]):
    """One payout or collection on its way: what intent-first needs of it."""

    @property
    def after_intent(self) -> str:
        """The failpoint right after the intent commits."""

    @property
    def after_send(self) -> str:
        """The failpoint right after the provider accepted, before its answer is recorded."""

    def existing(self) -> Result | None:
        """The ledger's record under the reference (None: none); raises when it is another."""

    def write_intent(self, session: Session) -> bool:
        """Insert the intent row; False when the reference is already taken."""

    def send(self) -> Any:
        """Ask the provider, once."""

    def accepted(self, answer: Any) -> Result:
        """Record the provider's acceptance."""

    def duplicate(self) -> Result:
        """The provider already knows the reference: an earlier attempt of ours may have gone."""

    def refused(self, exc: ProviderError) -> Exception:
        """Record a definite refusal (nothing moved); the error to raise."""

    def lost(self, exc: ProviderError) -> Exception:
        """The error to raise when the answer was lost (it may or may not have been made)."""


def start(
    engine: Engine,
    movement: Movement[R],
    *,
    refusals: tuple[type[ProviderError], ...],
    on_intent: OnIntent | None = None,
) -> R:
    """Commit the intent (with `on_intent`'s writes), then send it once and record the answer.

    A concurrent start with the same reference that won the insert: its record is returned and
    nothing is sent. `refusals` are the provider errors that mean it definitely did not make it.
    """
    with write_session(engine) as session:
        written = movement.write_intent(session)
        if written and on_intent is not None:
            on_intent(session)
    if not written:
        existing = movement.existing()
        assert existing is not None
        return existing
    failpoint(movement.after_intent)
    try:
        answer = movement.send()
    except DuplicateReferenceError:
        return movement.duplicate()
    except refusals as exc:
        raise movement.refused(exc) from exc
    except ProviderError as exc:
        # Timeout, 5xx, uninterpretable: it may or may not have been made. The intent stays;
        # the reconciler looks the reference up after the grace.
        raise movement.lost(exc) from exc
    failpoint(movement.after_send)
    return movement.accepted(answer)


def mark_accepted(row: Moved, *, now: dt.datetime) -> None:
    """The provider took it: an intent becomes accepted and due for its first lookup.

    A webhook (or the reconciler) may have got here first: what it confirmed stays.
    """
    if row.initiation == Initiation.INTENT.value:
        row.initiation = Initiation.ACCEPTED.value
    if not row.confirmed:
        row.next_check_at = now
    row.updated_at = now


def mark_refused(row: Moved, *, cause: str, message: str, now: dt.datetime) -> bool:
    """A definite refusal is the provider's final word: nothing moved, nothing to check.

    True when this confirms the row: its confirmed relay event goes out in the same
    transaction (docs/rules.md: Relay, `transfer.confirmed`).
    """
    first = not row.confirmed
    row.initiation = Initiation.REJECTED.value
    row.initiation_error = message
    row.status = TransferStatus.FAILED.value
    row.failure_reason = cause
    row.confirmed = True
    row.confirmed_at = now
    row.next_check_at = None
    row.updated_at = now
    return first
