"""The ledger's bookkeeping of alerts: claims, the hour's message count, groups, resolved notices.

Every function takes `*, session` and never commits: the dispatcher (`reconcile.alerts`)
claims, plans and records a dispatch's messages in one transaction, so a second reconciler
(or a restart) finds every key taken and sends nothing twice (docs/rules.md: Findings, "an
alert is sent once per finding … never again by a second reconciler or a restart").

A row of `alert` is either a **message** (status `sending`, then `sent`, `logged` or
`failed`) or a finding's claim carried by another row's message: `grouped` (in a grouped
message, `group_id` naming it) or `suppressed` (held back by the hourly storm guard).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, exists, func, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col

from ledger.models import Alert, Finding
from ledger.subjects import SUBJECT_MODELS, reference_column
from reconcile.alert_plan import Item

ALERTS = Alert.__table__  # type: ignore[attr-defined]
GROUPED, SUPPRESSED, SENDING = "grouped", "suppressed", "sending"
CARRIED = (GROUPED, SUPPRESSED)  # not messages of their own
DELIVERED = ("sent", "logged")  # messages that reached a channel (or the log)
GROUP_PREFIX = "group:"
_CHUNK = 500  # rows per multi-row statement: well under both drivers' parameter caps
# One number for PostgreSQL's advisory lock: dispatches take turns, so the hour's count that
# the storm guard reads cannot be passed by two reconcilers at once.
_DISPATCH_LOCK = 0x7061_7972_6563_6F6E  # "payrecon"


def take_turn(*, session: Session) -> None:
    """Wait for any other dispatch to commit (PostgreSQL; SQLite's write lock already does)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _DISPATCH_LOCK})


def _chunks(rows: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(rows), _CHUNK):
        yield rows[start : start + _CHUNK]


def claim(items: Sequence[Item], *, session: Session, now: dt.datetime) -> dict[str, int]:
    """Insert a row per item unless its key is taken; the keys won, with their row ids."""
    module: Any = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    statement = (
        module.insert(ALERTS)
        .on_conflict_do_nothing(index_elements=["key"])
        .returning(ALERTS.c.key, ALERTS.c.id)
    )
    won: dict[str, int] = {}
    for chunk in _chunks(items):
        rows = [
            {
                "key": item.key,
                "finding_id": item.finding_id,
                "step": item.step,
                "title": item.title,
                "body": item.body,
                "status": SENDING,
                "created_at": now,
            }
            for item in chunk
        ]
        # One statement compiled once, its rows sent as "insertmanyvalues" batches: building a
        # 500-row VALUES clause per chunk compiled 3,500 parameters each time (issue 26).
        won.update({str(key): int(row_id) for key, row_id in session.execute(statement, rows)})
    return won


def messages_since(start: dt.datetime, *, session: Session) -> int:
    """Messages created since `start` (the storm guard's count for the hour)."""
    return int(
        session.execute(
            select(func.count())
            .select_from(ALERTS)
            .where(ALERTS.c.created_at >= start, ALERTS.c.status.not_in(CARRIED))
        ).scalar_one()
    )


def new_message(
    key: str, title: str, body: str, *, session: Session, now: dt.datetime
) -> int | None:
    """A message row of its own (a group, the hour's suppressed notice); None if `key` is taken."""
    won = claim([Item(key=key, kind="", title=title, body=body)], session=session, now=now)
    return won.get(key)


def carry(
    ids: Sequence[int], status: str, *, group_id: int | None, title: str, session: Session
) -> None:
    """Mark claimed rows as carried by message `group_id` (grouped) or held back (suppressed)."""
    for chunk in _chunks(ids):
        session.execute(
            update(ALERTS)
            .where(ALERTS.c.id.in_(list(chunk)))
            .values(status=status, group_id=group_id, title=title, body="")
        )


def describe(alert_id: int, title: str, body: str, *, session: Session) -> None:
    """Write the title and body of a claimed row worded after its claim (reconcile.alerts)."""
    session.execute(update(ALERTS).where(ALERTS.c.id == alert_id).values(title=title, body=body))


def supersede(finding_ids: Sequence[int], *, newer_than: int, session: Session) -> None:
    """Earlier single alerts of these findings need no resolved notice of their own: the
    newest one (a stale escalation) gets it."""
    for chunk in _chunks(finding_ids):
        session.execute(
            update(ALERTS)
            .where(
                ALERTS.c.finding_id.in_(list(chunk)),
                ALERTS.c.id < newer_than,
                ALERTS.c.resolved_notice_at.is_(None),
            )
            .values(resolved_notice_at=func.coalesce(ALERTS.c.sent_at, ALERTS.c.created_at))
        )


def record_outcomes(
    outcomes: dict[int, str | None], *, delivered: str, session: Session, now: dt.datetime
) -> None:
    """Each message's outcome: `delivered` (sent, or logged without a channel) or failed."""
    for alert_id, error in outcomes.items():
        session.execute(
            update(ALERTS)
            .where(ALERTS.c.id == alert_id)
            .values(
                status="failed" if error else delivered,
                error=error,
                sent_at=None if error else now,
            )
        )


@dataclass(frozen=True)
class Resolved:
    """A delivered message whose findings have all resolved."""

    alert_id: int
    created_at: dt.datetime
    finding_ids: list[int]


def resolved_messages(*, session: Session, limit: int = 1000) -> list[Resolved]:
    """Delivered messages without a resolved notice whose findings are all resolved: single
    alerts, and groups none of whose members' findings is still unresolved."""
    f = Finding.__table__.c  # type: ignore[attr-defined]
    pending = (ALERTS.c.resolved_notice_at.is_(None), ALERTS.c.status.in_(DELIVERED))
    singles = session.execute(
        select(ALERTS.c.id, ALERTS.c.created_at, ALERTS.c.finding_id)
        .join(Finding.__table__, f.id == ALERTS.c.finding_id)  # type: ignore[attr-defined]
        .where(*pending, f.resolved_at.is_not(None))
        .order_by(ALERTS.c.id)
        .limit(limit)
    ).all()
    found = [Resolved(int(a), t, [int(fid)]) for a, t, fid in singles]
    member = ALERTS.alias("member")
    open_member = (
        select(member.c.id)
        .join(Finding.__table__, f.id == member.c.finding_id)  # type: ignore[attr-defined]
        .where(member.c.group_id == ALERTS.c.id, f.resolved_at.is_(None))
    )
    groups = session.execute(
        select(ALERTS.c.id, ALERTS.c.created_at)
        .where(*pending, ALERTS.c.key.startswith(GROUP_PREFIX), ~exists(open_member))
        .order_by(ALERTS.c.id)
        .limit(limit)
    ).all()
    for alert_id, created in groups:
        members = session.execute(
            select(ALERTS.c.finding_id).where(
                ALERTS.c.group_id == alert_id, ALERTS.c.finding_id.is_not(None)
            )
        ).scalars()
        found.append(Resolved(int(alert_id), created, [int(m) for m in members]))
    return found


def mark_resolved(alert_id: int, *, session: Session, now: dt.datetime) -> bool:
    """Claim the resolved notice of one message; False when another process took it."""
    result = session.execute(
        update(ALERTS)
        .where(ALERTS.c.id == alert_id, ALERTS.c.resolved_notice_at.is_(None))
        .values(resolved_notice_at=now)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class FindingSubject:
    """A finding's kind and what it is about, as alerts name it."""

    kind: str
    noun: str
    reference: str


def finding_subjects(ids: Sequence[int], *, session: Session) -> dict[int, FindingSubject]:
    """Each finding's kind and its subject's reference (a query a kind of subject a chunk)."""
    found: dict[int, FindingSubject] = {}
    for chunk in _chunks(list(ids)):
        for subject, model in SUBJECT_MODELS.items():
            noun = subject.value.replace("_", " ")
            reference = reference_column(subject, model.__table__.c).label("reference")  # type: ignore[union-attr]
            rows = session.execute(
                select(col(Finding.id), col(Finding.kind), reference)
                .join(
                    model,
                    and_(
                        col(Finding.subject) == subject.value,
                        col(model.id) == col(Finding.subject_id),
                    ),
                )
                .where(col(Finding.id).in_(list(chunk)))
            ).all()
            for finding_id, kind, reference in rows:
                found[int(finding_id)] = FindingSubject(str(kind), noun, str(reference))
    return found
