"""`payrecon collection create|expect|import|show` as a user runs them: the record, and bad
input refused with one line and exit 2, nothing written or sent."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine, func, select

from ledger.db import read_session
from ledger.models import Collection
from tests.integration.reconcile.helpers import running_sandbox
from tests.support.cli import one_line, run_cli
from tests.support.numbers import HOSTILE_TEXT


def _stored(engine: Engine) -> int:
    with read_session(engine) as session:
        return int(session.execute(select(func.count()).select_from(Collection)).scalar_one())


def test_create_prints_where_to_pay_and_show_reads_it_back(database_url: str) -> None:
    """`create` prints bank, account, name, naira amount and expiry; `show --json` the record."""
    with running_sandbox() as sandbox:
        env = {
            "PAYRECON_PROVIDER_BASE_URL": sandbox.base_url,
            "PAYRECON_PROVIDER_SECRET_KEY": sandbox.config.secret_key,
        }
        created = run_cli(
            database_url,
            "collection",
            "create",
            "--amount",
            "1250000",
            "--reference",
            "CLI-1",
            "--customer-name",
            "Ada Obi",
            **env,
        )
        again = run_cli(
            database_url,
            "collection",
            "create",
            "--amount",
            "1250000",
            "--reference",
            "CLI-1",
            **env,
        )
    shown = run_cli(database_url, "collection", "show", "CLI-1", "--json")
    record = json.loads(shown.stdout)
    assert created.exit_code == 0, created.output
    assert "₦12,500.00" in created.stdout and record["account_number"] in created.stdout
    assert "SANDBOX CHECKOUT - Ada Obi" in created.stdout and "expires at" in created.stdout
    assert "already recorded" in again.stdout
    assert record["amount"] == 1_250_000 and record["status"] == "pending"


def test_hostile_amounts_exit_2_and_nothing_is_written(database_url: str, engine: Engine) -> None:
    """`collection create/expect --amount` refuse each hostile value with one line."""
    env = {
        "PAYRECON_PROVIDER_BASE_URL": "http://127.0.0.1:9",
        "PAYRECON_PROVIDER_SECRET_KEY": "sk_test_x" * 2,
    }
    for text in [*HOSTILE_TEXT, "0"]:
        create = run_cli(
            database_url, "collection", "create", "--reference", "H-1", f"--amount={text}", **env
        )
        assert one_line(create).startswith("payrecon: --amount: must be"), text
    for text in HOSTILE_TEXT:
        expect = run_cli(
            database_url, "collection", "expect", "--reference", "H-2", f"--amount={text}"
        )
        assert one_line(expect).startswith("payrecon: --amount: must be"), text
    assert _stored(engine) == 0


def test_bad_fields_exit_2_naming_the_option(database_url: str, engine: Engine) -> None:
    """Currency, reference, e-mail and expiry problems name their option; nothing is sent."""
    env = {
        "PAYRECON_PROVIDER_BASE_URL": "http://127.0.0.1:9",
        "PAYRECON_PROVIDER_SECRET_KEY": "sk_test_x" * 2,
    }
    base = ["collection", "create", "--amount", "100"]
    usd = run_cli(database_url, *base, "--reference", "B-1", "--currency", "USD", **env)
    long = run_cli(database_url, *base, "--reference", "R" * 101, **env)
    blank = run_cli(database_url, *base, "--reference", "  ", **env)
    email = run_cli(database_url, *base, "--reference", "B-2", "--customer-email", "x@y", **env)
    expiry = run_cli(
        database_url,
        "collection",
        "expect",
        "--reference",
        "B-3",
        "--amount",
        "1",
        "--expires-at",
        "soon",
    )
    assert one_line(usd).startswith("payrecon: --currency:")
    assert one_line(long).startswith("payrecon: --reference:")
    assert one_line(blank).startswith("payrecon: --reference:")
    assert one_line(email).startswith("payrecon: --customer-email:")
    assert one_line(expiry).startswith("payrecon: --expires-at:")
    assert _stored(engine) == 0


def test_import_checks_the_whole_file_first(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """A bad row anywhere imports nothing; a good file registers each row once."""
    bad = tmp_path / "bad.csv"
    bad.write_text("reference,amount,expires_at\nI-1,100,\nI-2,١٠٠,\n", encoding="utf-8")
    dup = tmp_path / "dup.csv"
    dup.write_text("reference,amount\nI-1,100\nI-1,200\n", encoding="utf-8")
    good = tmp_path / "good.csv"
    good.write_text(
        "reference,amount,expires_at\nI-1,100,2026-12-01T00:00:00Z\nI-2,200,\n", encoding="utf-8"
    )
    missing = tmp_path / "missing.csv"
    missing.write_text("reference\nI-9\n", encoding="utf-8")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    refused = run_cli(database_url, "collection", "import", str(bad))
    clash = run_cli(database_url, "collection", "import", str(dup))
    assert "I-2" not in refused.stderr and one_line(refused).endswith("in digits 0-9")
    assert clash.exit_code == 1 and "nothing imported" in clash.stderr
    assert _stored(engine) == 0
    assert one_line(run_cli(database_url, "collection", "import", str(missing))).endswith("amount")
    assert run_cli(database_url, "collection", "import", str(binary)).exit_code == 2
    first = run_cli(database_url, "collection", "import", str(good), "--json")
    second = run_cli(database_url, "collection", "import", str(good), "--json")
    assert json.loads(first.stdout) == {"rows": 2, "registered": 2, "already_registered": 0}
    assert json.loads(second.stdout) == {"rows": 2, "registered": 0, "already_registered": 2}


def test_show_of_an_unknown_or_hostile_reference_exits_2(database_url: str) -> None:
    """An unknown, NUL-bearing or huge reference is one line and exit 2, never a traceback."""
    for reference in ("NOPE", "A\x00B", "x" * 10_000):
        assert one_line(run_cli(database_url, "collection", "show", reference))
