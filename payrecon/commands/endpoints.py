"""`payrecon endpoints add|list|disable|enable|remove|rotate-secret`: the merchant's systems
that receive payrecon's events (docs/rules.md: Relay)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from sqlalchemy.exc import DBAPIError, OperationalError

from admin.actions import relay as actions
from admin.errors import AdminError, InvalidError
from ledger.db import read_session, write_session
from ledger.errors import DatabaseUnavailableError
from ledger.events.types import DEFAULT_TYPES
from ledger.types import utcnow
from payrecon.actor import cli_operator
from payrecon.context import EXIT_USAGE, AppContext, app_context, fail
from relay import endpoints as ops
from relay.keys import SecretBox
from relay.queries import endpoint_record, endpoint_records, parse_row_id

T = TypeVar("T")
PLAIN_HEADER = ("id", "url", "events", "enabled", "pending", "last_success")
_FLAT = str.maketrans("\t\r\n", "   ")


@click.group()
def endpoints() -> None:
    """The merchant's systems that receive payrecon's signed events."""


def _box(app: AppContext) -> SecretBox:
    try:
        return actions.secret_box(app.settings())
    except AdminError as exc:
        fail(exc.message, EXIT_USAGE)


def _run(work: Callable[[], T]) -> T:
    """`work`, with an unknown id, bad input or a missing key as exit 2 and a silent database
    as exit 1."""
    try:
        return work()
    except AdminError as exc:
        fail(exc.message, EXIT_USAGE)
    except (DatabaseUnavailableError, OperationalError, DBAPIError) as exc:
        fail(f"database unavailable: {exc}")


def _endpoint_id(text: str) -> int:
    endpoint_id = parse_row_id(text)
    if endpoint_id is None:
        fail(f"no endpoint {text!r}: an endpoint's id is a whole number", EXIT_USAGE)
    return endpoint_id


@endpoints.command("add")
@click.argument("url")
@click.option(
    "--events", default=None, help="Comma list of event types (default: all but transfer.reported)."
)
@click.option("--description", default=None, help="A note for operators.")
@click.option("--json", "as_json", is_flag=True, help="Print the id and the secret as JSON.")
@click.pass_context
def add(
    ctx: click.Context, url: str, events: str | None, description: str | None, as_json: bool
) -> None:
    """Add an endpoint (http(s)://, or a broker: amqp(s)://, nats://, redis(s)://); its
    whsec_ secret is printed this once, and a broker URL's user:password is stored sealed."""
    app = app_context(ctx)
    allow = app.settings().relay_allow_networks
    try:
        # Checked before the database is opened: a typo costs no connection.
        actions.check_endpoint(url, events, description, allow=allow)
    except InvalidError as exc:
        option = {"url": "URL", "events": "--events", "description": "--description"}
        fail(f"{option.get(exc.field or 'url', 'URL')}: {exc.message}", EXIT_USAGE)
    secret_box = _box(app)
    engine = app.engine()

    def create() -> tuple[dict[str, Any], str]:
        with write_session(engine) as session:
            endpoint, secret = actions.add_endpoint(
                session,
                cli_operator(),
                secret_box,
                url=url,
                events=events,
                description=description,
                allow=allow,
                now=utcnow(),
            )
            return endpoint_record(endpoint), secret

    record, secret = _run(create)
    if as_json:
        click.echo(json.dumps({**record, "secret": secret}, indent=2, ensure_ascii=False))
        return
    click.echo(f"endpoint {record['id']} added: {record['url']}")
    click.echo(f"events: {', '.join(record['events'])}")
    click.echo(f"secret: {secret}")
    click.echo("The secret is shown only now: give it to the consumer to verify signatures.")


@endpoints.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON array instead of a table.")
@click.pass_context
def list_endpoints(ctx: click.Context, as_json: bool) -> None:
    """List endpoints: id, URL, events, enabled, pending deliveries, last success."""
    engine = app_context(ctx).engine(read_only=True)

    def load() -> list[dict[str, Any]]:
        with read_session(engine) as session:
            return endpoint_records(session, ops.listed(session))

    items = _run(load)
    if as_json:
        click.echo(json.dumps(items, indent=2, ensure_ascii=False))
        return
    if not items:
        click.echo("no endpoints (add one with: payrecon endpoints add URL)")
        return
    console = Console()
    if not console.is_terminal:
        # Piped: one tab-separated line per endpoint, nothing cut, so `cut -f2` gives URLs.
        lines = [PLAIN_HEADER, *(_row(item, ",") for item in items)]
        click.echo("\n".join("\t".join(cell.translate(_FLAT) for cell in row) for row in lines))
        return
    # On a terminal the default set is named as such, and a list of types wraps between them.
    rows = [_row(item, ", ", default="default (all but transfer.reported)") for item in items]
    table = Table(box=box.SIMPLE_HEAVY)
    table.add_column("Id", justify="right", no_wrap=True)
    table.add_column("URL", overflow="fold")
    table.add_column("Events", overflow="fold")
    table.add_column("Enabled", min_width=3, overflow="fold")
    table.add_column("Pending", justify="right", no_wrap=True)
    table.add_column("Last success (UTC)", overflow="fold")
    for row in rows:
        table.add_row(*map(escape, row))
    console.print(table)


def _row(item: dict[str, Any], separator: str, *, default: str | None = None) -> tuple[str, ...]:
    enabled = "yes" if item["enabled"] else f"no ({item['disabled_reason'] or 'disabled'})"
    last = item["last_success_at"]
    events = separator.join(item["events"])
    if default is not None and frozenset(item["events"]) == DEFAULT_TYPES:
        events = default
    return (
        str(item["id"]),
        item["url"],
        events,
        enabled,
        str(item["pending"]),
        "never" if last is None else last[:19].replace("T", " "),
    )


def _set_enabled(ctx: click.Context, text: str, enabled: bool) -> None:
    endpoint_id = _endpoint_id(text)
    engine = app_context(ctx).engine()

    def change() -> None:
        with write_session(engine) as session:
            actions.set_enabled(session, cli_operator(), endpoint_id, enabled, now=utcnow())

    _run(change)
    click.echo(f"endpoint {endpoint_id} {'enabled' if enabled else 'disabled'}")


@endpoints.command("disable")
@click.argument("endpoint_id", metavar="ID")
@click.pass_context
def disable(ctx: click.Context, endpoint_id: str) -> None:
    """Stop sending to endpoint ID; its deliveries wait, pending."""
    _set_enabled(ctx, endpoint_id, False)


@endpoints.command("enable")
@click.argument("endpoint_id", metavar="ID")
@click.pass_context
def enable(ctx: click.Context, endpoint_id: str) -> None:
    """Send to endpoint ID again; its pending deliveries resume."""
    _set_enabled(ctx, endpoint_id, True)


@endpoints.command("remove")
@click.argument("endpoint_id", metavar="ID")
@click.pass_context
def remove(ctx: click.Context, endpoint_id: str) -> None:
    """Remove endpoint ID: it gets nothing more; its delivery history stays."""
    row_id = _endpoint_id(endpoint_id)
    engine = app_context(ctx).engine()

    def change() -> None:
        with write_session(engine) as session:
            actions.remove_endpoint(session, cli_operator(), row_id, now=utcnow())

    _run(change)
    click.echo(f"endpoint {row_id} removed (its delivery history is kept)")


@endpoints.command("rotate-secret")
@click.argument("endpoint_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the id and the secret as JSON.")
@click.pass_context
def rotate_secret(ctx: click.Context, endpoint_id: str, as_json: bool) -> None:
    """Give endpoint ID a new secret; the old one keeps signing beside it for 24 h."""
    row_id = _endpoint_id(endpoint_id)
    app = app_context(ctx)
    secret_box = _box(app)
    engine = app.engine()

    def rotate() -> tuple[str | None, str]:
        with write_session(engine) as session:
            endpoint, secret = actions.rotate_secret(
                session, cli_operator(), secret_box, row_id, now=utcnow()
            )
            return endpoint_record(endpoint)["previous_secret_until"], secret

    until, secret = _run(rotate)
    if as_json:
        click.echo(json.dumps({"id": row_id, "secret": secret, "previous_secret_until": until}))
        return
    click.echo(f"endpoint {row_id}: new secret: {secret}")
    click.echo(f"The old secret still signs, beside the new one, until {until}.")


@endpoints.command("reseal")
@click.pass_context
def reseal(ctx: click.Context) -> None:
    """Seal every endpoint's secrets again with the first key of PAYRECON_RELAY_KEYS.

    The step in the middle of a key rotation: put the new key first, run this, then drop the
    old key.
    """
    app = app_context(ctx)
    secret_box = _box(app)
    engine = app.engine()

    def run() -> int:
        with write_session(engine) as session:
            return actions.reseal(session, cli_operator(), secret_box, now=utcnow())

    count = _run(run)
    click.echo(
        f"resealed the secrets of {count} endpoint(s) with the first PAYRECON_RELAY_KEYS key"
    )
