"""The packages' imports point one way: the receiver and the sandbox import none they must not."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = frozenset(
    {
        "admin",
        "ledger",
        "payments",
        "payrecon",
        "provider",
        "receiver",
        "reconcile",
        "relay",
        "sandbox",
        "statements",
        "telemetry",
        "web",
    }
)
# Package -> the first-party packages its modules may not import (docs/architecture.md).
FORBIDDEN = {
    # Webhook ingest only: the operators' surface, the reconciler and money movement sit above
    # it, and the composition root builds it.
    # Its events go through the ledger's outbox (ledger.events), never the delivery worker.
    "receiver": frozenset({"admin", "payments", "payrecon", "reconcile", "relay"}),
    # The delivery worker sits beside the ledger and reads the outbox; alerts and settings
    # reach it from the composition root.
    "relay": frozenset({"admin", "payments", "payrecon", "receiver", "reconcile"}),
    # A second, independent reading of the provider's specification: it shares no code.
    "sandbox": FIRST_PARTY - {"sandbox"},
    # The ledger is the bottom layer: tables, queries and the outbox import nothing above them.
    "ledger": FIRST_PARTY - {"ledger"},
    # The provider client knows the provider's interface and nothing of the ledger above it.
    "provider": FIRST_PARTY - {"provider"},
    # Pure parsers, matcher and tie-out: bytes and facts in, typed values out; the import
    # shell and the reconcile pass that feed them from the ledger sit above.
    "statements": FIRST_PARTY - {"statements"},
    # The shared web toolkit sits below both HTTP surfaces and knows neither.
    "web": FIRST_PARTY - {"web", "ledger"},
    # Metrics read from the ledger and tracing: above the ledger, below everything that
    # reports through it (docs/architecture.md).
    "telemetry": FIRST_PARTY - {"telemetry", "ledger"},
    # The operators' surface takes shared web plumbing from `web`, never the receiver's.
    "admin": frozenset({"receiver"}),
}


def imported_packages(source: str) -> set[str]:
    """The top-level packages `source` imports, wherever the import statement stands (one
    inside a function counts too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_imports_inside_functions_and_submodules_are_found() -> None:
    """A function's own import and a dotted module both name their top-level package."""
    source = "import a.b\nfrom c.d import e\n\ndef f():\n    from g import h\n    import i\n"
    assert imported_packages(source) == {"a", "c", "g", "i"}
    assert imported_packages("from . import x\nfrom .y import z\n") == set()


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_none_of_its_forbidden_packages(package: str) -> None:
    """No module of the package imports, even inside a function, a package it must not."""
    modules = sorted((ROOT / package).rglob("*.py"))
    assert modules, f"no modules found under {package}/"
    wrong = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in modules
        if (found := imported_packages(path.read_text()) & FORBIDDEN[package])
    }
    assert wrong == {}


# The functions that change a finding; besides ledger/findings.py only ledger.events.findings
# calls them, so no caller can change a finding without writing its relay event.
FINDING_CHANGES = frozenset({"raise_finding", "resolve_finding", "acknowledge_finding"})
FINDING_MODULES = frozenset({"ledger/findings.py", "ledger/events/findings.py"})


def finding_changes_imported(source: str) -> set[str]:
    """The finding-changing names `source` takes from `ledger.findings` (the module itself
    counts as all of them)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "ledger.findings":
            found.update(alias.name for alias in node.names if alias.name in FINDING_CHANGES)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module == "ledger"
            and any(alias.name == "findings" for alias in node.names)
        ) or (
            isinstance(node, ast.Import)
            and any(alias.name == "ledger.findings" for alias in node.names)
        ):
            found.update(FINDING_CHANGES)
    return found


def test_finding_changes_found_in_every_import_form() -> None:
    """Named imports, the module imported from its package and a dotted import all count."""
    assert finding_changes_imported("from ledger.findings import raise_finding, check_note") == {
        "raise_finding"
    }
    assert finding_changes_imported("from ledger import findings") == FINDING_CHANGES
    assert finding_changes_imported("import ledger.findings") == FINDING_CHANGES
    assert finding_changes_imported("from ledger.events.findings import raise_finding") == set()


def test_only_the_event_writing_wrapper_changes_findings() -> None:
    """Every module raises, resolves and acknowledges findings through ledger.events.findings,
    which writes the change's event in the same transaction."""
    wrong = {
        str(path.relative_to(ROOT)): sorted(found)
        for package in sorted(FIRST_PARTY)
        for path in sorted((ROOT / package).rglob("*.py"))
        if str(path.relative_to(ROOT)) not in FINDING_MODULES
        and (found := finding_changes_imported(path.read_text()))
    }
    assert wrong == {}


# Who may write the rows the outbox owns (relay events and findings): the outbox itself, and
# ledger/findings.py, the row primitive that only ledger.events.findings calls (above).
OUTBOX_WRITERS = frozenset({"ledger/findings.py"})
OUTBOX_PACKAGE = "ledger/events/"
_OUTBOX_INSERTS = re.compile(
    r"INSERT\s+INTO\s+(finding|relay_event)\b"
    r"|\binsert\(\s*[\"'](finding|relay_event)[\"']"
    r"|\binsert\(\s*(Finding|RelayEvent)\b"
    r"|\bsession\.add\(\s*(Finding|RelayEvent)\(",
    re.IGNORECASE,
)


def outbox_inserts(source: str) -> list[str]:
    """The places in `source` that write finding or relay event rows, in any form we use."""
    return [match.group(0) for match in _OUTBOX_INSERTS.finditer(source)]


def test_outbox_inserts_found_in_every_form() -> None:
    """Raw SQL, a bulk insert by table name, a Core insert and an ORM add all count; other
    tables do not."""
    assert outbox_inserts('sql = "INSERT INTO finding (kind) VALUES (?)"')
    assert outbox_inserts('bulk.insert("relay_event", columns, rows)')
    assert outbox_inserts("session.execute(insert(Finding).values(kind=k))")
    assert outbox_inserts("session.add(Finding(kind=k))")
    assert outbox_inserts('bulk.insert("transfer", columns, rows)') == []
    assert outbox_inserts("session.execute(insert(DELIVERIES).values(row))") == []


def test_only_the_outbox_writes_findings_and_relay_events() -> None:
    """No module outside ledger/events (and the finding row primitive it wraps) inserts
    finding or relay event rows: every such row is written with its event, by one package."""
    wrong = {
        relative: found
        for package in sorted(FIRST_PARTY)
        for path in sorted((ROOT / package).rglob("*.py"))
        if not (relative := str(path.relative_to(ROOT))).startswith(OUTBOX_PACKAGE)
        and relative not in OUTBOX_WRITERS
        and relative != "ledger/models.py"
        and not relative.startswith("ledger/migrations/")
        and (found := outbox_inserts(path.read_text()))
    }
    assert wrong == {}
