"""The findings queue sorted by the amount at stake, largest first (bounded).

The amount at stake is the one figure rule's (`ledger.figures.amount_at_stake`), computed in
Python from each finding's transfer or collection, so the sort can never disagree with the
figure each row shows. It is not a column, so no index orders by it: the sort reads the
matching findings' kinds and their subjects' figures (a few columns, by primary key) and is
refused past `MAX_SORTED` matching findings — narrow the filter (a kind, a reference prefix)
or page newest first. Pages are keyset: the cursor holds the last row's amount and id.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.errors import LedgerError
from ledger.figures import amount_at_stake
from ledger.finding_queue import FindingFilter, QueuePage, finding_rows_page, matching
from ledger.models import Finding
from ledger.queries import MAX_PAGE, MAX_ROW_ID
from ledger.subjects import BOOK_MODELS, Subject

CURSOR_KIND = "fa"
# The most findings sorted by amount at once: sorting them costs ~0.3 s on either database.
MAX_SORTED = 20_000
# Subjects read per query: well under SQLite's 32,766 bound parameters.
_CHUNK = 5_000
_FIGURES = (
    "amount",
    "fee",
    "provider_amount",
    "provider_fee",
    "webhook_amount",
    "webhook_fee",
    "amount_paid",
    "status",
)


class TooManyToSortError(LedgerError):
    """More findings match than `MAX_SORTED`: the amount sort is refused."""

    def __init__(self, count_at_least: int) -> None:
        super().__init__(
            f"more than {MAX_SORTED} findings match; narrow the filter to sort by amount"
        )
        self.count_at_least = count_at_least


def encode_amount_cursor(amount: int, finding_id: int) -> str:
    """The cursor after the row (`amount`, `finding_id`) of the amount-sorted queue."""
    text = f"{CURSOR_KIND}:{amount}:{finding_id}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_amount_cursor(cursor: str) -> tuple[int, int]:
    """(amount, finding id) of a cursor `encode_amount_cursor` gave; ValueError otherwise."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("invalid cursor") from exc
    parts = text.split(":")
    if len(parts) != 3 or parts[0] != CURSOR_KIND:
        raise ValueError("invalid cursor")
    if not all(p.isdigit() and p.isascii() and len(p) <= 19 for p in parts[1:]):
        raise ValueError("invalid cursor")
    amount, finding_id = int(parts[1]), int(parts[2])
    if amount > MAX_ROW_ID or not 0 < finding_id <= MAX_ROW_ID:
        raise ValueError("invalid cursor")
    return amount, finding_id


def _figures(session: Session, pairs: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Any]:
    wanted: dict[str, set[int]] = {}
    for subject, subject_id in pairs:
        wanted.setdefault(subject, set()).add(subject_id)
    found: dict[tuple[str, int], Any] = {}
    for subject, ids in wanted.items():
        table = BOOK_MODELS[Subject(subject)].__table__  # type: ignore[union-attr]
        columns = [table.c.id, *(table.c[name] for name in _FIGURES if name in table.c)]
        ordered = sorted(ids)
        for start in range(0, len(ordered), _CHUNK):
            chunk = ordered[start : start + _CHUNK]
            for row in session.execute(select(*columns).where(table.c.id.in_(chunk))):
                figures = dict(row._mapping)
                if "amount_paid" not in table.c:
                    figures.pop("amount_paid", None)
                found[(subject, int(figures.pop("id")))] = SimpleNamespace(**figures)
    return found


def stakes(session: Session, where: FindingFilter) -> list[tuple[int, int]]:
    """(amount at stake, finding id) of every finding `where` keeps, largest first (ties: newest
    first); TooManyToSortError past `MAX_SORTED`."""
    statement = matching(
        select(col(Finding.id), col(Finding.kind), col(Finding.subject), col(Finding.subject_id)),
        where,
    ).limit(MAX_SORTED + 1)
    rows = list(session.execute(statement))
    if len(rows) > MAX_SORTED:
        raise TooManyToSortError(len(rows))
    owners = _figures(session, ((str(r.subject), int(r.subject_id)) for r in rows))
    ranked = [
        (amount_at_stake(str(r.kind), owners[(str(r.subject), int(r.subject_id))]), int(r.id))
        for r in rows
        if (str(r.subject), int(r.subject_id)) in owners
    ]
    ranked.sort(reverse=True)
    return ranked


def list_queue_by_amount(
    session: Session, where: FindingFilter, *, limit: int = 50, cursor: str | None = None
) -> tuple[QueuePage, int, int]:
    """One page of the queue, largest amount at stake first; with the number of matching
    findings and how many come before this page (for "51–100 of 812")."""
    limit = max(1, min(limit, MAX_PAGE))
    ranked = stakes(session, where)
    start = 0
    if cursor is not None:
        after = decode_amount_cursor(cursor)
        # The first row after the cursor's (amount, id) in the descending order.
        start = next((i for i, key in enumerate(ranked) if key < after), len(ranked))
    page = ranked[start : start + limit]
    more = start + limit < len(ranked)
    items = finding_rows_page(session, [finding_id for _, finding_id in page])
    next_cursor = encode_amount_cursor(*page[-1]) if page and more else None
    return QueuePage(items, next_cursor), len(ranked), start
