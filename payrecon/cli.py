"""The `payrecon` command line: a lazy click group, each command in its own module."""

from __future__ import annotations

import importlib
from typing import Any

import click

from payrecon import __version__
from payrecon.context import AppContext

# name -> ("module:attribute", the command's help as `payrecon --help` lists it). Modules are
# imported only when their command runs, so `--help` and `--version` import none of them (and
# none of SQLAlchemy, Alembic, httpx, apprise); a test checks each text against its command.
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": (
        "payrecon.commands.serve:serve",
        "Run the receiver: webhook, admin API, reports page, health and metrics.",
    ),
    "reconcile": (
        "payrecon.commands.reconcile:reconcile",
        "Confirm transfers against the provider's API and raise findings.",
    ),
    "relay": (
        "payrecon.commands.relay:relay",
        "Deliver payrecon's signed events to the merchant's endpoints.",
    ),
    "report": (
        "payrecon.commands.report:report",
        "Finance report: totals by status, fees, wallet debit, findings, stale pending, days.",
    ),
    "transfer": (
        "payrecon.commands.transfer:transfer",
        "Pay out, or register transfers initiated elsewhere.",
    ),
    "collection": (
        "payrecon.commands.collection:collection",
        "Collect money: accounts customers pay into, checked like payouts.",
    ),
    "provider": (
        "payrecon.commands.provider:provider",
        "Call the provider's API directly (PAYRECON_PROVIDER_BASE_URL, _SECRET_KEY).",
    ),
    "findings": (
        "payrecon.commands.findings:findings",
        "Findings raised by the receiver and the reconciler.",
    ),
    "replay": (
        "payrecon.commands.replay:replay",
        "Re-apply archived webhook deliveries in arrival order; the result equals live ingest.",
    ),
    "endpoints": (
        "payrecon.commands.endpoints:endpoints",
        "The merchant's systems that receive payrecon's signed events.",
    ),
    "checks": (
        "payrecon.commands.checks:checks",
        "The provider checks the reconciler kept: a transfer's, and pruning old ones.",
    ),
    "operators": (
        "payrecon.commands.operators:operators",
        "The people and scripts allowed into the admin API and the console.",
    ),
    "statement": (
        "payrecon.commands.statement:statement",
        "Import the wallet's and the bank's statements and work their lines.",
    ),
    "period": (
        "payrecon.commands.period:period",
        "Tie a period out against the statement, and close it.",
    ),
    "db": ("payrecon.commands.db:db", "Database maintenance."),
    "sandbox": (
        "payrecon.commands.sandbox:sandbox",
        "Run the provider emulator (all ten endpoints, webhooks, faults).",
    ),
    "demo": (
        "payrecon.commands.demo:demo",
        "Run the main job on a fresh SQLite ledger and the built-in sandbox (under a minute).",
    ),
}


class LazyGroup(click.Group):
    """A click group whose sub-commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, _, attribute = entry[0].partition(":")
        command: Any = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):  # pragma: no cover - a wiring mistake
            raise TypeError(f"{entry[0]} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own version imports every command to ask for its help; this one reads the
        # table, shortening each text as click does (through a stand-in command).
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [
            (name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit))
            for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup)
@click.version_option(__version__, prog_name="payrecon")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """payrecon: webhook receiver, payout ledger and reconciler for a bank-transfer provider."""
    app = AppContext()
    ctx.obj = app
    ctx.call_on_close(app.close)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="payrecon")
