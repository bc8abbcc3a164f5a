"""The audit log: one append-only row per operator action, and its filtered, paged reading."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert
from sqlmodel import Session, col, select

from ledger.models import AuditEntry
from ledger.queries import MAX_PAGE, decode_cursor, encode_cursor, iso
from ledger.types import storable_text

# Long enough for a note or an endpoint URL; a longer detail is cut, never refused (the
# action it records has already been checked and must not fail because of its audit row).
MAX_DETAIL_CHARS = 2_000
CURSOR_KIND = "a"


class AuditAction(enum.StrEnum):
    """The stable action names of the audit log (docs/rules.md: Console, operators and audit)."""

    LOGIN = "login"
    LOGIN_FAILED = "login_failed"
    # A Bearer or Basic token on /api, /reports or /console that belongs to no operator.
    AUTH_FAILED = "auth.failed"
    LOGOUT = "logout"
    FINDING_ACK = "finding.ack"
    FINDING_ASSIGN = "finding.assign"
    FINDING_NOTE = "finding.note"
    PAYOUT_CREATE = "payout.create"
    EXPECTED_REGISTER = "transfer.expect"
    COLLECTION_CREATE = "collection.create"
    COLLECTION_EXPECT = "collection.expect"
    ENDPOINT_ADD = "endpoint.add"
    ENDPOINT_UPDATE = "endpoint.update"
    ENDPOINT_REMOVE = "endpoint.remove"
    ENDPOINT_ROTATE = "endpoint.rotate"
    ENDPOINT_RESEAL = "endpoint.reseal"
    CHECKS_PRUNE = "checks.prune"
    RELAY_REPLAY = "relay.replay"
    WEBHOOK_REPLAY = "webhook.replay"
    DELIVERY_RETRY = "delivery.retry"
    OPERATOR_ADD = "operator.add"
    OPERATOR_REVOKE = "operator.revoke"
    SESSIONS_END = "operator.end_sessions"
    STATEMENT_IMPORT = "statement.import"
    STATEMENT_MATCH = "statement.match"
    STATEMENT_UNMATCH = "statement.unmatch"
    STATEMENT_IGNORE = "statement.ignore"
    PERIOD_CLOSE = "period.close"


def _clean(value: str | None, limit: int) -> str | None:
    if value is None:
        return None
    value = storable_text(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def record(
    session: Session,
    *,
    operator: str,
    role: str,
    action: str,
    subject: str | None,
    detail: str | None,
    remote_addr: str | None,
    now: dt.datetime,
) -> None:
    """Append one audit row in the caller's transaction (it commits with the action)."""
    session.add(
        AuditEntry(
            at=now,
            operator=_clean(operator, 64) or "",
            role=role,
            action=str(action),
            subject=_clean(subject, MAX_DETAIL_CHARS),
            detail=_clean(detail, MAX_DETAIL_CHARS),
            remote_addr=_clean(remote_addr, 64),
        )
    )


def record_many(
    session: Session,
    *,
    operator: str,
    role: str,
    action: str,
    subjects: Sequence[tuple[str, str | None]],
    remote_addr: str | None,
    now: dt.datetime,
) -> None:
    """`record` for one action on many subjects ((subject, detail) each): the same rows, in
    one statement (a bulk action by filter audits thousands of findings)."""
    if not subjects:
        return
    operator_name = _clean(operator, 64) or ""
    address = _clean(remote_addr, 64)
    session.execute(
        insert(AuditEntry.__table__),  # type: ignore[attr-defined]
        [
            {
                "at": now,
                "operator": operator_name,
                "role": role,
                "action": str(action),
                "subject": _clean(subject, MAX_DETAIL_CHARS),
                "detail": _clean(detail, MAX_DETAIL_CHARS),
                "remote_addr": address,
            }
            for subject, detail in subjects
        ],
    )


def entry_record(entry: AuditEntry) -> dict[str, Any]:
    """The JSON form of an audit row."""
    return {
        "id": entry.id,
        "at": iso(entry.at),
        "operator": entry.operator,
        "role": entry.role,
        "action": entry.action,
        "subject": entry.subject,
        "detail": entry.detail,
        "remote_addr": entry.remote_addr,
    }


@dataclass(frozen=True)
class AuditQuery:
    """The filters of `GET /api/audit`, already checked."""

    operator: str | None = None
    action: str | None = None
    since: dt.datetime | None = None
    limit: int = 50
    cursor: str | None = None


@dataclass(frozen=True)
class AuditPage:
    """One page of audit rows, newest first, and the cursor of the next (None at the end)."""

    items: list[AuditEntry]
    next_cursor: str | None


def decode_audit_cursor(cursor: str) -> int:
    """The row id inside an audit cursor; ValueError when it is not one this log gave out."""
    return decode_cursor(cursor, kind=CURSOR_KIND)


def list_entries(session: Session, query: AuditQuery) -> AuditPage:
    """Audit rows newest first, keyset-paginated by id so a page never shifts."""
    limit = max(1, min(query.limit, MAX_PAGE))
    statement = select(AuditEntry).order_by(col(AuditEntry.id).desc())
    if query.operator is not None:
        statement = statement.where(col(AuditEntry.operator) == query.operator)
    if query.action is not None:
        statement = statement.where(col(AuditEntry.action) == query.action)
    if query.since is not None:
        statement = statement.where(col(AuditEntry.at) >= query.since)
    if query.cursor is not None:
        statement = statement.where(col(AuditEntry.id) < decode_audit_cursor(query.cursor))
    rows = list(session.exec(statement.limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    last = rows[-1].id if rows else None
    cursor = encode_cursor(last, kind=CURSOR_KIND) if more and last is not None else None
    return AuditPage(rows, cursor)
