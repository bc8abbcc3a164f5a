"""Running `payrecon` in-process against a ledger, as the CLI tests do."""

from __future__ import annotations

from click.testing import CliRunner, Result

from payrecon.cli import cli


def run_cli(database_url: str, *args: str, **env: str) -> Result:
    """`payrecon ARGS` with PAYRECON_DATABASE_URL (and `env`) set."""
    return CliRunner().invoke(cli, list(args), env={"PAYRECON_DATABASE_URL": database_url, **env})


def one_line(result: Result) -> str:
    """The single stderr line of a refused command (asserting exit 2 and one line)."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, (result.exit_code, result.output)
    return lines[0]
