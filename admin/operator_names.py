"""Which names a finding may be assigned to: the operators' (and the bootstrap `admin`)."""

from __future__ import annotations

from sqlmodel import Session

from ledger.types import takes_text

BOOTSTRAP_ADMIN = "admin"
MAX_NAME_CHARS = 100


def is_operator(session: Session, name: str) -> bool:
    """True when `name` is an operator's name (the admin token's `admin` always is)."""
    del session  # operators arrive with the identity branch; until then any clean name
    return 0 < len(name) <= MAX_NAME_CHARS and takes_text(name) and name.strip() == name
