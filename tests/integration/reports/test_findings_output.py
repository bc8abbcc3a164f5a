"""`payrecon findings list` never cuts a reference: plain lines piped, a table on a terminal."""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from payrecon.cli import cli
from tests.integration.reports.ledgers import UTC, Spec, insert_ledger
from tests.support.processes import PAYRECON, payrecon_env
from tests.support.terminal import run_on_terminal

# 90 characters, the kind of reference an order system builds.
LONG_REFERENCE = (
    "ORD-2025-03-01-" + "merchant-7731-customer-0042-invoice-88213-attempt-0003-" + "x" * 20
)


def _ledger(engine: Engine) -> None:
    start = dt.datetime(2025, 3, 1, 9, tzinfo=UTC)
    insert_ledger(
        engine,
        [
            Spec(
                LONG_REFERENCE,
                "successful",
                start,
                500_000,
                1075,
                provider_fee=5375,
                confirmed=True,
                findings=[("fee_mismatch", "open")],
            ),
            Spec("short-1", "pending", start, 100_000, 1075, findings=[("stale_pending", "open")]),
        ],
    )


def test_piped_findings_list_is_tab_separated_and_whole(engine: Engine, database_url: str) -> None:
    """Not on a terminal: a header and one tab-separated line per finding, references whole."""
    assert len(LONG_REFERENCE) == 90
    _ledger(engine)
    result = CliRunner().invoke(
        cli, ["findings", "list"], env={"PAYRECON_DATABASE_URL": database_url}
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split("\t") == ["id", "kind", "reference", "detail", "opened_at", "state"]
    rows = [line.split("\t") for line in lines[1:]]
    assert [(row[1], row[2], row[5]) for row in rows] == [
        ("fee_mismatch", LONG_REFERENCE, "open"),
        ("stale_pending", "short-1", "open"),
    ]
    assert all(len(row) == 6 for row in rows)
    assert not set("━─│…") & set(result.stdout)


@pytest.mark.parametrize("columns", [80, 240])
def test_findings_list_on_a_terminal_shows_whole_references(
    engine: Engine, database_url: str, columns: int
) -> None:
    """On a real terminal, narrow or wide, every reference is printed whole on one line."""
    _ledger(engine)
    run = run_on_terminal(
        [*PAYRECON, "findings", "list"], payrecon_env(database_url=database_url), columns=columns
    )
    assert run.exit_code == 0, run.output
    assert "…" not in run.output
    lines = run.output.splitlines()
    assert any(LONG_REFERENCE in line for line in lines), run.output
    assert any("short-1" in line for line in lines)
    if columns == 240:
        assert "━" in run.output  # wide enough for the table
