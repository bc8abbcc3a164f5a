"""Who the command line is in the audit log: `cli:<OS user>`, with the admin role."""

from __future__ import annotations

import datetime as dt
import getpass
import re

from sqlmodel import Session

from ledger.audit import record

# Whoever runs `payrecon` holds the database settings, so can do anything an admin can; the
# OS user name says which person it was. `:` never appears in an operator's name, so this
# name cannot be mistaken for an operator's.
CLI_ROLE = "admin"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def cli_actor() -> str:
    """`cli:<OS user>` (`cli` alone when the OS cannot say who is logged in)."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError, ImportError):
        return "cli"
    user = _UNSAFE.sub("_", user)[:59]
    return f"cli:{user}" if user else "cli"


def audit_cli(
    session: Session,
    action: str,
    subject: str | None,
    detail: str | None = None,
    *,
    now: dt.datetime,
) -> None:
    """Record an action of the command line in `session`'s transaction."""
    record(
        session,
        operator=cli_actor(),
        role=CLI_ROLE,
        action=action,
        subject=subject,
        detail=detail,
        remote_addr=None,
        now=now,
    )
