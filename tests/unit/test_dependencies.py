"""The packages' imports point one way: the receiver and the sandbox import none they must not."""

from __future__ import annotations

import ast
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
    }
)
# Package -> the first-party packages its modules may not import (docs/architecture.md).
FORBIDDEN = {
    # Webhook ingest only: the operators' surface, the reconciler and money movement sit above
    # it, and the composition root builds it.
    "receiver": frozenset({"admin", "payments", "payrecon", "reconcile"}),
    # The outbox and the delivery worker sit beside the ledger: the code that decides writes
    # events through it; alerts and settings reach it from the composition root.
    "relay": frozenset({"admin", "payments", "payrecon", "receiver", "reconcile"}),
    # A second, independent reading of the provider's specification: it shares no code.
    "sandbox": FIRST_PARTY - {"sandbox"},
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
