"""The `payrecon` command line: a lazy click group, each command in its own module."""

from __future__ import annotations

import importlib
from typing import Any

import click

from payrecon import __version__
from payrecon.context import AppContext

# name -> "module:attribute"; imported only when the command runs, so `--help` stays fast.
COMMANDS: dict[str, str] = {
    "serve": "payrecon.commands.serve:serve",
    "reconcile": "payrecon.commands.reconcile:reconcile",
    "report": "payrecon.commands.report:report",
    "transfer": "payrecon.commands.transfer:transfer",
    "provider": "payrecon.commands.provider:provider",
    "findings": "payrecon.commands.findings:findings",
    "replay": "payrecon.commands.replay:replay",
    "db": "payrecon.commands.db:db",
    "sandbox": "sandbox.cli:command",
    "demo": "payrecon.commands.demo:demo",
}


class LazyGroup(click.Group):
    """A click group whose sub-commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attribute = target.partition(":")
        command: Any = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):  # pragma: no cover - a wiring mistake
            raise TypeError(f"{target} is not a click command")
        return command


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
