"""What a subject brings to the reconciler: the `Book` protocol and the verdict it returns.

A book is one kind of subject (a transfer, a collection; next a statement line): its table,
how it is looked up at the provider (if it is: a statement line is matched, not looked up),
its pure evaluator, the fields only it has, and the event that says the provider confirmed it.
Everything else a verdict changes (status, confirmation, the check schedule, the findings,
the provider check kept, the counters) is written by `reconcile.books.recorder`, once for
every book. Adding a subject is one module implementing this, its pure evaluator and the
migration of its table (docs/architecture.md, "The subject model").
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol, TypeVar

from sqlmodel import Session

from ledger.events.outbox import Subscriber
from ledger.events.types import Subject
from ledger.types import FindingKind, Initiation, TransferStatus
from reconcile.answers import LookupAnswer
from reconcile.pass_summary import LookupCounts, PassSummary

Row = TypeVar("Row")
V = TypeVar("V", bound="Verdict")


class Verdict(Protocol):
    """What every evaluator's verdict tells the recorder (each adds its book's own fields)."""

    @property
    def status(self) -> TransferStatus: ...
    @property
    def confirmed(self) -> bool: ...
    @property
    def newly_confirmed(self) -> bool: ...
    @property
    def next_check_in(self) -> float | None: ...  # seconds; None: nothing more to check
    @property
    def check_attempts(self) -> int: ...
    @property
    def not_found_count(self) -> int: ...
    @property
    def provider_status(self) -> TransferStatus | None: ...
    @property
    def provider_reference(self) -> str | None: ...
    @property
    def failure_reason(self) -> str | None: ...
    @property
    def initiation(self) -> Initiation | None: ...
    @property
    def open(self) -> dict[FindingKind, str]: ...
    @property
    def resolved(self) -> frozenset[FindingKind]: ...
    @property
    def provider_error(self) -> bool: ...


class Book(Protocol[Row, V]):
    """One kind of subject the reconciler checks."""

    @property
    def subject(self) -> Subject: ...
    @property
    def model(self) -> type[Row]: ...
    @property
    def lookup(self) -> str | None:
        """The provider client's method looking one reference up; None when the book's rows
        are matched, not looked up (no pass claims them)."""

    @property
    def resolvable(self) -> frozenset[FindingKind]:
        """The finding kinds a verdict may resolve on this book (others stay as they are)."""

    def evaluate(self, row: Row, answer: LookupAnswer, now: dt.datetime) -> V:
        """The pure evaluator's verdict on the row's view and one answer."""

    def write(self, row: Row, verdict: V) -> None:
        """Set the fields only this book has from the verdict."""

    def confirmed(
        self, session: Session, row: Row, *, now: dt.datetime, endpoints: list[Subscriber]
    ) -> Any:
        """Write the event saying the provider confirmed the row's final status."""

    def settle(
        self,
        session: Session,
        row: Row,
        verdict: V,
        *,
        now: dt.datetime,
        endpoints: list[Subscriber],
        summary: PassSummary,
    ) -> None:
        """What the verdict changes beyond the common fields, after the confirmed event and
        before findings (a transfer's reversal); nothing for most books."""

    def counts(self, summary: PassSummary) -> LookupCounts:
        """Where the pass counts this book's lookups."""
