"""`payrecon --help` and `--version` start without the heavy libraries (spec: start-up time)."""

from __future__ import annotations

import subprocess

import click
import pytest

from payrecon.cli import COMMANDS, cli
from tests.support.processes import PAYRECON, payrecon_env

HEAVY = ("sqlalchemy", "alembic", "sqlmodel", "httpx", "apprise", "pydantic", "uvicorn")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_heavy_library(flag: str) -> None:
    """Run as a user runs them, neither flag imports SQLAlchemy, Alembic, SQLModel, httpx,
    apprise, pydantic or uvicorn (what `-X importtime` lists is what was imported)."""
    result = subprocess.run(
        [PAYRECON[0], "-X", "importtime", *PAYRECON[1:], flag],
        env=payrecon_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    imported = {line.rpartition("|")[2].strip() for line in result.stderr.splitlines()}
    assert result.returncode == 0 and "payrecon" in result.stdout
    assert "payrecon.cli" in imported  # the listing is real
    assert sorted(m for m in imported if m.split(".")[0] in HEAVY) == []


def test_the_help_table_matches_each_command() -> None:
    """The help `payrecon --help` lists without importing is each command's own."""
    ctx = click.Context(cli)
    for name, (_, text) in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None
        assert command.get_short_help_str(limit=200) == text
