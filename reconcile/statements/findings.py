"""The statement findings (docs/rules.md "Statements and period tie-out", Findings): raised
and resolved after an import and after a change to a line, in the same transaction, through
`ledger.events` (the only writer of findings)."""

from __future__ import annotations

import datetime as dt

from sqlmodel import Session

from reconcile.statements.hand import LineChange
from reconcile.statements.importer import ImportSummary


def after_import(session: Session, summary: ImportSummary, *, now: dt.datetime) -> None:
    """Raise and resolve what the import's new lines call for."""


def after_line_change(session: Session, change: LineChange, *, now: dt.datetime) -> None:
    """Raise and resolve what a change to one line (match, unmatch, ignore) calls for."""
