"""Every command that uses the ledger checks its migration revision first (spec: Schema), and
read-only commands never create a SQLite ledger."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from click.testing import CliRunner, Result

from ledger.migrate import alembic_config, current, head_revision
from payrecon.cli import cli
from tests.support.databases import PostgresFactory
from tests.support.servers import free_port

HEAD = head_revision()

# Every command that opens the ledger, with arguments that would otherwise go on to use it.
COMMANDS = [
    ["reconcile", "once"],
    ["reconcile", "run"],
    [
        *("transfer", "send", "--amount", "15000", "--bank-code", "058"),
        *("--account-number", "0123456789", "--reference", "SCHEMA-1"),
    ],
    ["transfer", "expect", "--reference", "SCHEMA-1", "--amount", "15000"],
    ["transfer", "import", "expected.csv"],
    ["replay"],
    ["report"],
    ["findings", "list"],
    ["findings", "ack", "1", "--note", "seen"],
    ["endpoints", "list"],
    ["endpoints", "disable", "1"],
    ["serve", "--port", "0"],
]


def _invoke(database_url: str, args: list[str]) -> Result:
    Path("expected.csv").write_text("reference,amount\nSCHEMA-2,100\n")
    if args[0] == "serve":
        args = ["serve", "--port", str(free_port())]
    env = {
        "PAYRECON_DATABASE_URL": database_url,
        # Nothing listens there: a command that went past the check would fail differently.
        "PAYRECON_PROVIDER_BASE_URL": f"http://127.0.0.1:{free_port()}",
        "PAYRECON_PROVIDER_SECRET_KEY": "sk_test_schemacheck",
    }
    return CliRunner().invoke(cli, args, env=env)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(args[:2]))
@pytest.mark.parametrize("state", ["empty", "0001"])
def test_a_postgresql_ledger_behind_the_code_stops_every_command(
    postgres_factory: PostgresFactory, args: list[str], state: str
) -> None:
    """On a PostgreSQL database never migrated, or at an older revision, each command exits 2
    with the one line telling to run `payrecon db upgrade`, and changes nothing."""
    if state == "empty":
        url = postgres_factory.empty()
    else:
        url = postgres_factory.new()
        command.downgrade(alembic_config(url), state)
    result = _invoke(url, args)
    at = "base" if state == "empty" else state
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"payrecon: database not migrated (at {at}, need {HEAD}): run payrecon db upgrade"
    ]
    assert current(url) == (None if state == "empty" else state)


def test_db_upgrade_itself_runs_on_an_empty_postgresql(postgres_factory: PostgresFactory) -> None:
    """`db upgrade` does not check (it is the cure), and afterwards the commands run."""
    url = postgres_factory.empty()
    upgraded = _invoke(url, ["db", "upgrade"])
    listed = _invoke(url, ["findings", "list"])
    assert upgraded.exit_code == 0 and f"database at revision {HEAD}" in upgraded.stdout
    assert listed.exit_code == 0 and listed.stdout.strip() == "no findings"


def test_a_ledger_of_an_unknown_newer_revision_stops_commands(database_url: str) -> None:
    """A ledger migrated by a newer payrecon is refused (exit 2, one line), on both backends."""
    from sqlalchemy import text

    from ledger.db import create_db_engine

    engine = create_db_engine(database_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    result = _invoke(database_url, ["report"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"payrecon: database at revision 9999, which this payrecon does not know (it needs "
        f"{HEAD}): run the payrecon version that migrated it"
    ]


def test_sqlite_is_still_migrated_on_start(tmp_path: Path) -> None:
    """A SQLite ledger at an older revision is brought to the head by the command itself."""
    url = f"sqlite:///{tmp_path}/old.db"
    command.upgrade(alembic_config(url), "0001")
    result = _invoke(url, ["replay"])
    assert result.exit_code == 0, result.output
    assert current(url) == HEAD


@pytest.mark.parametrize("args", [["report"], ["findings", "list"]])
def test_read_only_commands_never_create_a_sqlite_ledger(tmp_path: Path, args: list[str]) -> None:
    """`report` and `findings list` on a SQLite file that does not exist exit 2 naming it."""
    path = tmp_path / "missing" / "ledger.db"
    result = _invoke(f"sqlite:///{path}", args)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"payrecon: no ledger at {path} (PAYRECON_DATABASE_URL): the file does not exist, and "
        "this command only reads"
    ]
    assert not path.exists() and not path.parent.exists()
