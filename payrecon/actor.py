"""Who the command line is: the `Actor` `cli:<OS user>`, with the admin role."""

from __future__ import annotations

import datetime as dt
import getpass
import re

from sqlmodel import Session

from admin.actions.actor import Actor, Role, audit

# Whoever runs `payrecon` holds the database settings, so can do anything an admin can; the
# OS user name says which person it was. `:` never appears in an operator's name, so this
# name cannot be mistaken for an operator's.
CLI_ROLE = Role.ADMIN
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def cli_actor() -> str:
    """`cli:<OS user>` (`cli` alone when the OS cannot say who is logged in)."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError, ImportError):
        return "cli"
    user = _UNSAFE.sub("_", user)[:59]
    return f"cli:{user}" if user else "cli"


def cli_operator() -> Actor:
    """The actor of every operator action run from the command line."""
    return Actor(cli_actor(), CLI_ROLE)


def audit_cli(
    session: Session,
    action: str,
    subject: str | None,
    detail: str | None = None,
    *,
    now: dt.datetime,
) -> None:
    """Record an action of the command line in `session`'s transaction (for the commands that
    are not operator actions of admin.actions, such as `payrecon replay`)."""
    audit(session, cli_operator(), action, subject, detail, now=now)
