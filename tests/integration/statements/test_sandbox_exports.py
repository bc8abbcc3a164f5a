"""The real sandbox's statement exports, in each format, imported through the CLI: the
fundings show as a wallet credit and a bank debit, suggested to each other as a pair."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from sandbox.app import create_app
from sandbox.config import SandboxConfig
from tests.support.cli import run_cli
from tests.support.servers import running_server

FORMATS = ("csv", "xlsx", "mt940", "camt053")


def _exports(tmp_path: Path) -> dict[str, Path]:
    """Two fundings in a real sandbox, then its wallet statement in every format and the
    bank statement as CSV."""
    files: dict[str, Path] = {}
    with (
        running_server(create_app(SandboxConfig(seed=3))) as url,
        httpx.Client(base_url=url, timeout=10) as control,
    ):
        for amount in (2_500_000, 7_000_000):
            assert control.post("/_sandbox/wallet/fund", json={"amount": amount}).status_code == 201
        for fmt in FORMATS:
            answer = control.get("/_sandbox/wallet/statement", params={"format": fmt})
            assert answer.status_code == 200
            files[fmt] = tmp_path / f"wallet.{fmt}"
            files[fmt].write_bytes(answer.content)
        bank = control.get("/_sandbox/bank/statement", params={"format": "csv"})
        files["bank"] = tmp_path / "bank.csv"
        files["bank"].write_bytes(bank.content)
    return files


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_wallet_format_imports_the_fundings(
    database_url: str, tmp_path: Path, fmt: str
) -> None:
    """Every format of the wallet export gives the two funding credits, chaining."""
    path = _exports(tmp_path)[fmt]
    args = ["--mapping", "sandbox"] if fmt in {"csv", "xlsx"} else []
    result = run_cli(database_url, "statement", "import", str(path), *args, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["new"], summary["format"], summary["balance_breaks"]) == (2, fmt, [])
    lines = run_cli(database_url, "statement", "lines", "--json")
    amounts = [(item["direction"], item["amount"]) for item in json.loads(lines.stdout)["items"]]
    assert amounts == [("credit", 2_500_000), ("credit", 7_000_000)]


def test_a_funding_pair_is_suggested_across_wallet_and_bank(
    database_url: str, tmp_path: Path
) -> None:
    """The bank's debits and the wallet's credits of the same amounts are suggested to each
    other, one to one, and confirming one pair matches both of its lines."""
    files = _exports(tmp_path)
    wallet = run_cli(database_url, "statement", "import", str(files["csv"]), "--mapping", "sandbox")
    assert wallet.exit_code == 0, wallet.output
    bank = run_cli(
        database_url, "statement", "import", str(files["bank"]), "--mapping", "sandbox",
        "--account", "bank", "--kind", "bank", "--json",
    )  # fmt: skip
    assert bank.exit_code == 0, bank.output
    assert json.loads(bank.stdout)["suggested"] == 2
    items = json.loads(run_cli(database_url, "statement", "lines", "--json").stdout)["items"]
    by_id = {item["id"]: item for item in items}
    assert all(item["state"] == "suggested" for item in items)
    for item in items:
        assert by_id[item["line"]]["amount"] == item["amount"]
        assert by_id[item["line"]]["account"] != item["account"]
    first = items[0]
    confirmed = run_cli(
        database_url, "statement", "match", str(first["id"]), "--line", str(first["line"])
    )
    assert confirmed.exit_code == 0, confirmed.output
    matched = json.loads(
        run_cli(database_url, "statement", "lines", "--state", "matched", "--json").stdout
    )["items"]
    assert sorted(item["id"] for item in matched) == sorted([first["id"], first["line"]])
