"""The demo's month end: export the sandbox's wallet statement, import it, match it and tie
the period out (docs/rules.md "Statements and period tie-out": the demo; its one statement fault
leaves one residual item, explained)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import Engine

from admin.actions.statements import import_statement
from ledger.db import write_session
from ledger.statement_lines import DEFAULT_WALLET
from ledger.types import utcnow
from payrecon.actor import cli_operator
from payrecon.settings import Settings
from reconcile.statements.importer import ImportSummary
from reconcile.statements.period import period_tie_out
from statements.tieout import TieOut

STATEMENT_NAME = "wallet-statement.csv"


@dataclass(frozen=True)
class DemoStatement:
    """What the demo's statement step did: the file, the import and the tie-out."""

    path: Path
    imported: ImportSummary
    tie_out: TieOut


def tie_out_demo(
    engine: Engine, settings: Settings, sandbox_url: str, directory: Path
) -> DemoStatement:
    """Download the wallet statement (CSV, every day), import it and tie its days out."""
    answer = httpx.get(
        f"{sandbox_url}/_sandbox/wallet/statement", params={"format": "csv"}, timeout=30
    )
    answer.raise_for_status()
    path = directory / STATEMENT_NAME
    path.write_bytes(answer.content)
    with write_session(engine) as session:
        # The operator action: the import is audited and raises its findings, as the CLI's.
        imported = import_statement(
            session,
            cli_operator(),
            path,
            account=DEFAULT_WALLET,
            format="csv",
            mapping="sandbox",
            window=settings.statement_date_window,
            max_bytes=settings.statement_max_bytes,
            now=utcnow(),
        )
    with write_session(engine) as session:
        today = dt.date.today()
        since, until = imported.first_date or today, imported.last_date or today
        result = period_tie_out(session, DEFAULT_WALLET, since, until)
    return DemoStatement(path, imported, result)
