"""Which names a finding may be assigned to: live operators' and the bootstrap `admin`."""

from __future__ import annotations

from sqlalchemy import select
from sqlmodel import Session, col

from admin.identity import ADMIN_NAME
from ledger.models import OperatorAccount


def is_operator(session: Session, name: str) -> bool:
    """True when `name` is a live (not revoked) operator's, or the admin token's `admin`."""
    if name == ADMIN_NAME:
        return True
    found = session.execute(
        select(col(OperatorAccount.id)).where(
            col(OperatorAccount.name) == name, col(OperatorAccount.revoked_at).is_(None)
        )
    ).first()
    return found is not None
