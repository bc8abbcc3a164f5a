"""`payrecon operators`: tokens shown once, bad names and duplicates exit 2 with one line."""

from __future__ import annotations

import json

import pytest
from click.testing import Result
from sqlalchemy import Engine, select

from ledger.db import read_session
from ledger.models import OperatorAccount
from ledger.operators import secret_hash
from tests.support.cli import run_cli


def _one_line_exit_2(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    assert (result.exit_code, len(lines)) == (2, 1), result.output
    return lines[0]


def test_add_prints_a_token_once_and_stores_only_its_hash(
    database_url: str, engine: Engine
) -> None:
    """The token printed is 43 URL-safe characters; the ledger holds its SHA-256, not it."""
    added = run_cli(database_url, "operators", "add", "ada", "--role", "admin", "--json")
    token = json.loads(added.output)["token"]
    with read_session(engine) as session:
        account = session.execute(select(OperatorAccount)).scalar_one()
    assert (account.name, account.role, len(token)) == ("ada", "admin", 43)
    assert account.token_hash == secret_hash(token) and token not in account.token_hash


@pytest.mark.parametrize(
    "name", ["<script>alert(1)</script>", "x" * 65, "ålice", "a\x1bb", "a b", "admin", "cli"]
)
def test_hostile_or_reserved_names_exit_2_and_add_nothing(
    database_url: str, engine: Engine, name: str
) -> None:
    """A name with markup, spaces, control or non-ASCII characters, too long or reserved is
    refused with one line, and no operator is stored."""
    line = _one_line_exit_2(run_cli(database_url, "operators", "add", name, "--role", "viewer"))
    assert "operator name" in line or "reserved" in line
    with read_session(engine) as session:
        assert session.execute(select(OperatorAccount)).first() is None


def test_a_duplicate_name_and_an_unknown_revoke_exit_2(database_url: str) -> None:
    """Adding a name twice (even once revoked) and revoking a stranger are usage errors."""
    assert run_cli(database_url, "operators", "add", "bo", "--role", "viewer").exit_code == 0
    twice = _one_line_exit_2(run_cli(database_url, "operators", "add", "bo", "--role", "admin"))
    assert run_cli(database_url, "operators", "revoke", "bo").exit_code == 0
    again = _one_line_exit_2(run_cli(database_url, "operators", "add", "bo", "--role", "admin"))
    stranger = _one_line_exit_2(run_cli(database_url, "operators", "revoke", "nobody"))
    assert "exists already (active)" in twice and "exists already (revoked)" in again
    assert "no active operator named 'nobody'" in stranger


def test_list_shows_names_roles_and_states_never_tokens(database_url: str) -> None:
    """`operators list` marks revoked operators and prints no token or hash."""
    token = json.loads(
        run_cli(database_url, "operators", "add", "cy", "--role", "finance", "--json").output
    )["token"]
    run_cli(database_url, "operators", "add", "di", "--role", "viewer")
    run_cli(database_url, "operators", "revoke", "di")
    listed = run_cli(database_url, "operators", "list")
    lines = listed.output.strip().splitlines()
    assert [line.split("\t")[:2] for line in lines] == [["cy", "finance"], ["di", "viewer"]]
    assert lines[0].endswith("active") and "revoked" in lines[1]
    assert token not in listed.output and secret_hash(token) not in listed.output
