"""The findings workflow and provider checks on the command line."""

from __future__ import annotations

import json

from sqlalchemy import Engine, select

from ledger.db import read_session, write_session
from ledger.models import AuditEntry, Finding, FindingNote
from ledger.operators import add_operator
from ledger.types import FindingKind, utcnow
from tests.integration.console.seed import finding, transfer
from tests.support.cli import run_cli


def test_ack_many_assign_and_note_from_the_cli(database_url: str, engine: Engine) -> None:
    """`findings ack A B --note`, `assign ID NAME`, `note ID TEXT` change the findings, each
    audited as cli:<user>; an unknown id changes nothing (exit 1), an unknown name exits 2."""
    a = finding(engine, transfer(engine, "CLI-A"), FindingKind.AMOUNT_MISMATCH)
    b = finding(engine, transfer(engine, "CLI-B"), FindingKind.ORPHAN_EVENT)
    with write_session(engine) as session:
        add_operator(session, name="ada", role="finance", now=utcnow())
    refused = run_cli(database_url, "findings", "ack", str(a), "424242", "--note", "x")
    acked = run_cli(database_url, "findings", "ack", str(a), str(b), str(a), "--note", "paid")
    assigned = run_cli(database_url, "findings", "assign", str(b), "ada")
    unknown = run_cli(database_url, "findings", "assign", str(b), "nobody-here")
    noted = run_cli(database_url, "findings", "note", str(b), "called the bank")
    control = run_cli(database_url, "findings", "note", str(b), "bell\x07")
    assert refused.exit_code == 1 and "nothing changed" in refused.output
    assert acked.exit_code == 0, acked.output
    assert acked.output.count("acknowledged finding") == 2
    assert (assigned.exit_code, unknown.exit_code, noted.exit_code) == (0, 2, 0)
    assert control.exit_code == 2
    with read_session(engine) as session:
        rows = {f.id: (f.ack_note, f.assignee) for f in session.execute(select(Finding)).scalars()}
        notes = [n.body for n in session.execute(select(FindingNote)).scalars()]
        actions = sorted(
            (e.action, e.subject)
            for e in session.execute(select(AuditEntry)).scalars()
            if e.operator.startswith("cli")
        )
    assert rows == {a: ("paid", None), b: ("paid", "ada")}
    assert sorted(notes) == ["called the bank", "paid", "paid"]
    assert ("finding.assign", f"finding:{b}") in actions
    assert ("finding.note", f"finding:{b}") in actions
    assert [x for x in actions if x[0] == "finding.ack"] == sorted(
        [("finding.ack", f"finding:{a}"), ("finding.ack", f"finding:{b}")]
    )


def test_checks_list_and_prune_from_the_cli(database_url: str) -> None:
    """`checks list REF` prints JSON (an unknown reference exits 1); `checks prune` reports."""
    empty = run_cli(database_url, "checks", "list", "NOPE")
    pruned = run_cli(database_url, "checks", "prune")
    assert empty.exit_code == 1 and "no transfer" in empty.output
    assert pruned.exit_code == 0 and pruned.output.startswith("pruned 0 provider checks")


def test_checks_list_prints_a_transfers_checks(database_url: str, engine: Engine) -> None:
    """A transfer without checks lists an empty JSON array."""
    transfer(engine, "CLI-C")
    listed = run_cli(database_url, "checks", "list", "CLI-C")
    assert listed.exit_code == 0 and json.loads(listed.output) == []
