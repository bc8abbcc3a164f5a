"""`payrecon findings list` never cuts a reference: plain lines piped, a table on a terminal."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, update

from ledger.models import Finding
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


def test_findings_list_shows_figures_in_naira_and_json_keeps_kobo(
    engine: Engine, database_url: str
) -> None:
    """The text list reads a fee detail in naira; `--json` keeps the stored kobo detail."""
    _ledger(engine)
    detail = "fees differ: quoted 1000, webhook 1050, provider 1000 kobo"
    with engine.begin() as conn:
        conn.execute(update(Finding).values(detail=detail))
    env = {"PAYRECON_DATABASE_URL": database_url}
    text = CliRunner().invoke(cli, ["findings", "list"], env=env)
    as_json = CliRunner().invoke(cli, ["findings", "list", "--json"], env=env)
    assert text.exit_code == 0 and as_json.exit_code == 0, text.output + as_json.output
    assert "fees differ: quoted ₦10.00, webhook ₦10.50, provider ₦10.00" in text.stdout
    assert "1050" not in text.stdout
    assert {item["detail"] for item in json.loads(as_json.stdout)} == {detail}
