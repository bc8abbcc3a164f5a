"""A subject's timeline: typed entries from every source, merged in time order (pure).

Each source (webhook deliveries, provider checks, finding changes, notes, alerts, relay
deliveries, operator actions) yields entries of its own type; `merge` orders them all. The
subject is generic (`transfer` now, `collection` later): a new subject only needs sources.
"""

from __future__ import annotations

import datetime as dt
import enum
import heapq
from collections.abc import Iterable
from dataclasses import dataclass


class EntryKind(enum.StrEnum):
    """Where an entry comes from; also its order among entries of the same instant."""

    RECORD = "record"  # the subject was created or registered
    WEBHOOK = "webhook"
    CHECK = "check"
    STATEMENT = "statement"  # a statement line matched (or suggested) to the subject
    FINDING = "finding"
    NOTE = "note"
    ALERT = "alert"
    RELAY = "relay"
    OPERATOR = "operator"


# At one instant the cause comes before what it caused: the record, then what the provider
# said, then the finding it raised, the alert and relay event about it, and people last.
_RANK = {kind: rank for rank, kind in enumerate(EntryKind)}


@dataclass(frozen=True)
class Entry:
    """One line of a timeline: when, from where, a short title and details (plain text)."""

    at: dt.datetime
    kind: EntryKind
    title: str
    detail: str = ""
    actor: str | None = None  # who did it, for operators' actions and notes
    sequence: int = 0  # the row id inside its source: a stable order for equal instants

    def sort_key(self) -> tuple[dt.datetime, int, int]:
        """Time, then the kind's rank, then the source's own order."""
        return (self.at, _RANK[self.kind], self.sequence)


def merge(*sources: Iterable[Entry]) -> list[Entry]:
    """Every entry of every source, oldest first; ties broken by kind, then row order.

    The order does not depend on the order the sources are given in.
    """
    return list(heapq.merge(*(sorted(s, key=Entry.sort_key) for s in sources), key=Entry.sort_key))
