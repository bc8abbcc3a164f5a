"""Operator changes: add one (its token shown once), revoke one, end sessions (docs/rules.md:
Console, operators and audit)."""

from __future__ import annotations

import datetime as dt

from sqlmodel import Session

from admin.actions.actor import Actor, audit
from ledger.audit import AuditAction
from ledger.models import OperatorAccount
from ledger.operators import add_operator, end_sessions, revoke_operator


def add(
    session: Session, actor: Actor, name: str, role: str, *, now: dt.datetime
) -> tuple[OperatorAccount, str]:
    """Create operator `name` with `role`: (it, its token). OperatorError for a bad name."""
    account, token = add_operator(session, name=name, role=role, now=now)
    audit(session, actor, AuditAction.OPERATOR_ADD, f"operator:{name}", f"role {role}", now=now)
    return account, token


def revoke(session: Session, actor: Actor, name: str, *, now: dt.datetime) -> int:
    """Revoke operator `name` and end its sessions; how many sessions ended."""
    ended = revoke_operator(session, name=name, now=now)
    detail = f"{ended} session(s) ended"
    audit(session, actor, AuditAction.OPERATOR_REVOKE, f"operator:{name}", detail, now=now)
    return ended


def end_all_sessions(session: Session, actor: Actor, name: str | None, *, now: dt.datetime) -> int:
    """End the live sessions of operator `name` (of everyone when None); how many."""
    ended = end_sessions(session, operator=name, now=now)
    subject = "operator:*" if name is None else f"operator:{name}"
    detail = f"{ended} session(s) ended"
    audit(session, actor, AuditAction.SESSIONS_END, subject, detail, now=now)
    return ended
