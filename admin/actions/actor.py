"""Who does an operator action: an `Actor` (name, role, address), and its audit row."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from ledger.audit import record, record_many


class Role(enum.StrEnum):
    """What an operator may do: viewer reads, finance also works findings and exports,
    admin does everything (docs/rules.md: Console, operators and audit)."""

    VIEWER = "viewer"
    FINANCE = "finance"
    ADMIN = "admin"

    def allows(self, needed: Role) -> bool:
        """True when this role may do what `needed` may (viewer < finance < admin)."""
        return _RANK[self] >= _RANK[needed]


_RANK = {Role.VIEWER: 0, Role.FINANCE: 1, Role.ADMIN: 2}


@dataclass(frozen=True)
class Actor:
    """Who acts: an operator proved by an HTTP request (with the address it came from), or
    the command line (`cli:<OS user>`, admin, no address)."""

    name: str
    role: Role
    address: str | None = None


def audit(
    session: Session,
    actor: Actor,
    action: str,
    subject: str | None,
    detail: str | None = None,
    *,
    now: dt.datetime,
) -> None:
    """Record `action` by `actor` in `session`'s transaction (the action's own)."""
    record(
        session,
        operator=actor.name,
        role=actor.role.value,
        action=action,
        subject=subject,
        detail=detail,
        remote_addr=actor.address,
        now=now,
    )


def audit_many(
    session: Session,
    actor: Actor,
    action: str,
    subjects: Sequence[tuple[str, str | None]],
    *,
    now: dt.datetime,
) -> None:
    """`audit` of one action on many subjects ((subject, detail) each), in one statement."""
    record_many(
        session,
        operator=actor.name,
        role=actor.role.value,
        action=action,
        subjects=subjects,
        remote_addr=actor.address,
        now=now,
    )
