"""`payrecon sandbox`: the provider emulator, with its keys also read from `.env`.

The emulator (`sandbox/`) imports nothing of payrecon's, so it reads only the process
environment. Every other payrecon command also reads a `.env` file in the working directory
(`payrecon.settings`), and `.env.example` lists the sandbox's keys there: this command puts the
file's `PAYRECON_SANDBOX_*` values into the environment first, as pydantic-settings does for
the other commands (a variable already set in the environment wins over the file).
"""

from __future__ import annotations

import os
from typing import Any

import click
from dotenv import dotenv_values

from sandbox.cli import PUBLIC_ENV, SECRET_ENV
from sandbox.cli import command as emulator

_FROM_ENV_FILE = (SECRET_ENV, PUBLIC_ENV)


def load_env_file(path: str) -> None:
    """Set each sandbox key the `.env` file at `path` holds and the environment does not."""
    if not os.path.isfile(path):
        return
    values = {name.upper(): value for name, value in dotenv_values(path).items()}
    for name in _FROM_ENV_FILE:
        value = values.get(name)
        if value and name not in os.environ:
            os.environ[name] = value


class _EnvFileCommand(click.Command):
    """The emulator's command, reading `.env` before its options are turned into a config."""

    def invoke(self, ctx: click.Context) -> Any:
        from payrecon.settings import ENV_FILE

        load_env_file(ENV_FILE)
        return super().invoke(ctx)


sandbox = _EnvFileCommand(
    name="sandbox",
    params=emulator.params,
    callback=emulator.callback,
    help=emulator.help,
    context_settings=emulator.context_settings,
)
