"""`payrecon demo`: pay, complete, reconcile and report on the embedded default."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

from payrecon.context import EXIT_RUNTIME, EXIT_USAGE, fail
from payrecon.errors import DemoDirectoryError
from payrecon.logconfig import configure_logging

if TYPE_CHECKING:
    from payrecon.demostatement import DemoStatement
from reconcile.reports.naira import naira
from reconcile.statements.render import explanation_lines


@click.command()
@click.option(
    "--transfers",
    default=200,
    show_default=True,
    type=click.IntRange(10, 5000),
    help="How many payouts to make.",
)
@click.option(
    "--directory",
    default="payrecon-demo",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the ledger and reports go.",
)
@click.option("--seed", default=7, show_default=True, help="Seed for amounts and faults.")
def demo(transfers: int, directory: Path, seed: int) -> None:
    """Run the main job on a fresh SQLite ledger and the built-in sandbox (under a minute)."""
    from payrecon.demo import run_demo

    # Per-request log lines would drown the progress bars: warnings only.
    configure_logging(level=logging.WARNING)
    console = Console()
    console.rule("payrecon demo")
    try:
        result = run_demo(console, transfers=transfers, directory=directory, seed=seed)
    except DemoDirectoryError as exc:
        fail(str(exc), EXIT_USAGE)
    except KeyboardInterrupt:
        console.print("interrupted: sandbox and receiver stopped")
        sys.exit(130)
    table = Table(title="demo summary", show_header=False)
    table.add_row("transfers paid out", str(result.transfers))
    table.add_row("confirmed by the provider", str(result.confirmed))
    table.add_row("still pending", str(result.pending))
    collections = result.collections
    table.add_row("collections created", str(collections.created))
    table.add_row("collections confirmed by the provider", str(collections.confirmed))
    table.add_row("collected (received)", naira(collections.received))
    table.add_row("reconciler passes", str(result.passes))
    if result.reversal is not None:
        found = result.reversal.found_by
        table.add_row(
            "reversed after success, webhook dropped",
            f"{result.reversal.reference} ({found or 'not found yet'})",
        )
    for kind, count in sorted(result.open_findings.items()):
        table.add_row(f"open finding: {kind}", str(count))
    relayed = result.relayed
    table.add_row("events delivered to the demo consumer", str(relayed.delivered))
    table.add_row(
        "verified by the consumer (Standard Webhooks)", str(sum(result.verified.values()))
    )
    for kind, count in sorted(result.verified.items()):
        table.add_row(f"  {kind}", str(count))
    if result.refused or relayed.pending or relayed.failed:
        table.add_row(
            "refused / still pending / failed",
            f"{result.refused} / {relayed.pending} / {relayed.failed}",
        )
    table.add_row("time", f"{result.seconds:.1f} s")
    console.print(table)
    for path in result.reports:
        console.print(f"wrote {path}")
    if result.statement is not None:
        _print_statement(console, result.statement)
    if not result.settled:
        console.print(
            "[red]the ledger did not settle in time: some transfers are neither "
            "confirmed nor flagged[/red]"
        )
        sys.exit(EXIT_RUNTIME)


def _print_statement(console: Console, statement: DemoStatement) -> None:
    """The month end: the wallet statement imported and the period's tie-out."""
    data = statement.imported.to_json()
    console.rule("wallet statement")
    console.print(
        f"imported {statement.path}: {data['read']} lines, matched {data['matched']}, "
        f"suggested {data['suggested']}, unmatched {data['unmatched']}",
        highlight=False,
    )
    tie_out = statement.tie_out
    console.print(
        f"tie-out {tie_out.since} to {tie_out.until}: statement moved "
        f"{naira(tie_out.statement_movement)}, the ledger {naira(tie_out.ledger_movement)}",
        highlight=False,
    )
    for line in explanation_lines(tie_out):
        console.print(line, highlight=False, markup=False)
