"""Statement accounts and stored lines as the CLI, the API and the console read them: the
account by name, a line with its match, and the paged list of `statement lines`
(docs/rules.md "Statements and period tie-out")."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from ledger.models import Collection, StatementAccount, StatementLine, Transfer
from ledger.queries import MAX_PAGE, decode_cursor, encode_cursor

CURSOR_KIND = "sl"
ACCOUNT_KINDS = ("wallet", "bank")
LINE_STATES = ("matched", "suggested", "unmatched", "ignored")
DEFAULT_WALLET = "provider-wallet"


def find_account(session: Session, name: str) -> StatementAccount | None:
    """The statement account called `name`, if there is one."""
    found: StatementAccount | None = session.execute(
        select(StatementAccount).where(col(StatementAccount.name) == name)
    ).scalar_one_or_none()
    return found


@dataclass(frozen=True)
class LineQuery:
    """The filters of `statement lines` / `GET /api/statements/lines`, already checked."""

    account_id: int | None = None
    state: str | None = None
    since: dt.date | None = None
    until: dt.date | None = None
    limit: int = 100
    cursor: str | None = None


@dataclass(frozen=True)
class LinePage:
    """One page of lines (oldest first) and the cursor of the next (None at the end)."""

    items: list[dict[str, Any]]
    next_cursor: str | None


def list_lines(session: Session, query: LineQuery) -> LinePage:
    """Lines in id order (import order), keyset-paginated so a page never shifts."""
    limit = max(1, min(query.limit, MAX_PAGE))
    statement = select(StatementLine).order_by(col(StatementLine.id))
    if query.account_id is not None:
        statement = statement.where(col(StatementLine.account_id) == query.account_id)
    if query.state is not None:
        statement = statement.where(col(StatementLine.state) == query.state)
    if query.since is not None:
        statement = statement.where(col(StatementLine.date) >= query.since)
    if query.until is not None:
        statement = statement.where(col(StatementLine.date) <= query.until)
    if query.cursor is not None:
        after = decode_cursor(query.cursor, kind=CURSOR_KIND)
        statement = statement.where(col(StatementLine.id) > after)
    rows = list(session.execute(statement.limit(limit + 1)).scalars())
    more = len(rows) > limit
    rows = rows[:limit]
    names = _account_names(session)
    items = [line_record(session, row, names) for row in rows]
    last = rows[-1].id if rows else None
    return LinePage(items, encode_cursor(last, kind=CURSOR_KIND) if more and last else None)


def _account_names(session: Session) -> dict[int, str]:
    rows = session.execute(select(StatementAccount.id, StatementAccount.name))  # type: ignore[call-overload]
    return {row[0]: row[1] for row in rows}


def line_record(
    session: Session, line: StatementLine, names: dict[int, str] | None = None
) -> dict[str, Any]:
    """The contract's keys of a stored line (docs/rules.md: `statement lines --json`)."""
    names = names if names is not None else _account_names(session)
    transfer = collection = None
    if line.transfer_id is not None:
        transfer = session.get(Transfer, line.transfer_id)
    if line.collection_id is not None:
        collection = session.get(Collection, line.collection_id)
    return {
        "id": line.id,
        "account": names.get(line.account_id, ""),
        "date": line.date.isoformat(),
        "value_date": None if line.value_date is None else line.value_date.isoformat(),
        "amount": line.amount,
        "direction": line.direction,
        "balance": line.balance,
        "reference": line.reference,
        "narration": line.narration,
        "state": line.state,
        "transfer": None if transfer is None else transfer.reference,
        "collection": None if collection is None else collection.reference,
        "line": line.other_line_id,
        "role": line.role,
        "ignored_as": line.ignored_as,
        "note": line.note,
        "matched_by": line.matched_by,
        "reversal": line.reversal_pending,
    }
