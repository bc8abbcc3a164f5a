"""`payrecon operators add|list|revoke|end-sessions`: the people (and scripts) allowed into the
admin API and the console, each with a role (docs/rules.md: Console, operators and audit)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from admin.actions import operators as actions
from ledger.db import read_session, write_session
from ledger.errors import DatabaseUnavailableError, OperatorError
from ledger.models import OperatorAccount
from ledger.operators import check_name, list_operators
from ledger.queries import iso
from ledger.types import utcnow
from payrecon.actor import cli_operator
from payrecon.context import EXIT_USAGE, app_context, fail

T = TypeVar("T")
ROLES = ("viewer", "finance", "admin")  # admin.identity.Role, which the CLI does not import
ADMIN_NAME = "admin"  # PAYRECON_ADMIN_TOKEN's operator (admin.identity.ADMIN_NAME)


@click.group()
def operators() -> None:
    """The people and scripts allowed into the admin API and the console."""


def _run(work: Callable[[], T]) -> T:
    """`work`, with a bad name or an unknown operator as exit 2 and a silent database as 1."""
    try:
        return work()
    except OperatorError as exc:
        fail(str(exc), EXIT_USAGE)
    except IntegrityError:
        # Another `operators add` with the same name committed first.
        fail("an operator of that name exists already", EXIT_USAGE)
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")


def _record(account: OperatorAccount) -> dict[str, Any]:
    return {
        "name": account.name,
        "role": account.role,
        "created_at": iso(account.created_at),
        "revoked_at": iso(account.revoked_at),
    }


@operators.command("add")
@click.argument("name")
@click.option("--role", required=True, type=click.Choice(ROLES), help="What the operator may do.")
@click.option("--json", "as_json", is_flag=True, help="Print name, role and token as JSON.")
@click.pass_context
def operators_add(ctx: click.Context, name: str, role: str, as_json: bool) -> None:
    """Add operator NAME and print its token, once (only a hash of it is kept)."""
    engine = app_context(ctx).engine()

    def add() -> tuple[dict[str, Any], str]:
        now = utcnow()
        with write_session(engine) as session:
            account, token = actions.add(session, cli_operator(), name, role, now=now)
            return _record(account), token

    record, token = _run(add)
    if as_json:
        click.echo(json.dumps({**record, "token": token}))
        return
    click.echo(f"added operator {name} ({role})")
    click.echo(f"token: {token}")
    click.echo("Keep the token now: it is not shown again (payrecon keeps only its hash).")


@operators.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON array instead of lines.")
@click.pass_context
def operators_list(ctx: click.Context, as_json: bool) -> None:
    """List operators (names, roles, dates; never tokens), revoked ones marked."""
    engine = app_context(ctx).engine(read_only=True)

    def load() -> list[dict[str, Any]]:
        with read_session(engine) as session:
            return [_record(account) for account in list_operators(session)]

    items = _run(load)
    if as_json:
        click.echo(json.dumps(items, indent=2))
        return
    if not items:
        click.echo("no operators (PAYRECON_ADMIN_TOKEN, if set, is the operator `admin`)")
        return
    for item in items:
        state = f"revoked {item['revoked_at']}" if item["revoked_at"] else "active"
        click.echo(f"{item['name']}\t{item['role']}\tadded {item['created_at']}\t{state}")


@operators.command("revoke")
@click.argument("name")
@click.pass_context
def operators_revoke(ctx: click.Context, name: str) -> None:
    """Revoke operator NAME: its token stops working and its sessions end at once."""
    engine = app_context(ctx).engine()

    def revoke() -> int:
        now = utcnow()
        with write_session(engine) as session:
            return actions.revoke(session, cli_operator(), name, now=now)

    ended = _run(revoke)
    click.echo(f"revoked operator {name}; {ended} session(s) ended")


@operators.command("end-sessions")
@click.argument("name", required=False)
@click.option("--all", "everyone", is_flag=True, help="End every operator's sessions.")
@click.pass_context
def operators_end_sessions(ctx: click.Context, name: str | None, everyone: bool) -> None:
    """End the console sessions of operator NAME (`admin` for PAYRECON_ADMIN_TOKEN's), or of
    everyone with --all, at once; tokens keep working."""
    if (name is None) == (not everyone):
        fail("give an operator's NAME or --all (not both)", EXIT_USAGE)
    if name is not None and name != ADMIN_NAME:
        _run(lambda: check_name(name))
    engine = app_context(ctx).engine()

    def end() -> int:
        now = utcnow()
        with write_session(engine) as session:
            return actions.end_all_sessions(session, cli_operator(), name, now=now)

    ended = _run(end)
    click.echo(f"{ended} session(s) of {'every operator' if name is None else name} ended")
