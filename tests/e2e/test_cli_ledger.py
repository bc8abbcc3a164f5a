"""The ledger commands as a user runs them: db upgrade, transfer expect/import, replay."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.processes import PAYRECON, payrecon_env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PAYRECON, *args], env=env, capture_output=True, text=True, timeout=60)


def test_expect_and_import_register_transfers(database_url: str, tmp_path: Path) -> None:
    """expect registers one, import many; repeats are identical, conflicts exit 1."""
    env = payrecon_env(database_url=database_url)
    first = _run(["transfer", "expect", "--reference", "INV-1", "--amount", "5000"], env)
    again = _run(["transfer", "expect", "--reference", "INV-1", "--amount", "5000"], env)
    clash = _run(["transfer", "expect", "--reference", "INV-1", "--amount", "6000"], env)
    bad = _run(["transfer", "expect", "--reference", "INV-2", "--amount", "1.5"], env)
    csv_file = tmp_path / "expected.csv"
    csv_file.write_text(
        "reference,amount,fee,provider_reference\nA1,100,10,\nA2,200,,P2\nINV-1,5000,,\n"
    )
    imported = _run(["transfer", "import", str(csv_file), "--json"], env)
    assert (first.returncode, again.returncode) == (0, 0)
    assert "already registered" in again.stdout
    assert clash.returncode == 1 and "different amount" in clash.stderr
    assert bad.returncode == 2 and "--amount" in bad.stderr
    assert json.loads(imported.stdout) == {"rows": 3, "registered": 2, "already_registered": 1}


def test_a_bad_import_file_writes_nothing(database_url: str, tmp_path: Path) -> None:
    """A file with one bad row is refused whole, naming the line."""
    env = payrecon_env(database_url=database_url)
    csv_file = tmp_path / "bad.csv"
    csv_file.write_text("reference,amount\nB1,100\nB2,-4\n")
    result = _run(["transfer", "import", str(csv_file)], env)
    missing = tmp_path / "cols.csv"
    missing.write_text("ref,amt\nx,1\n")
    columns = _run(["transfer", "import", str(missing)], env)
    listed = _run(["transfer", "expect", "--reference", "B1", "--amount", "100"], env)
    assert result.returncode == 2 and "bad.csv:3: amount" in result.stderr
    assert columns.returncode == 2 and "missing column" in columns.stderr
    assert "registered" in listed.stdout and "already" not in listed.stdout


def test_configuration_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    """A bad setting stops any command with exit 2 and one line naming the variable."""
    env = payrecon_env(database_url=f"sqlite:///{tmp_path}/x.db", fee_schedule="oops")
    result = _run(["db", "upgrade"], env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "payrecon: PAYRECON_FEE_SCHEDULE: tier 'oops' is not LOW-HIGH:FEE"
    ]


def test_db_upgrade_and_replay_run(database_url: str) -> None:
    """db upgrade reports the revision; replay on an empty ledger is a no-op."""
    env = payrecon_env(database_url=database_url)
    upgraded = _run(["db", "upgrade"], env)
    replayed = _run(["replay", "--json"], env)
    bad_date = _run(["replay", "--since", "yesterday"], env)
    assert upgraded.returncode == 0 and "revision" in upgraded.stdout
    assert json.loads(replayed.stdout)["deliveries"] == 0
    assert bad_date.returncode == 2


def test_a_reference_that_is_not_text_is_refused(database_url: str, tmp_path: Path) -> None:
    """A byte that is not UTF-8 in an argument (Python reads it as a lone surrogate) or in an
    import file exits 2 with a one-line reason and registers nothing."""
    env = payrecon_env(database_url=database_url)
    argument = subprocess.run(
        [*PAYRECON, "transfer", "expect", "--reference", b"AB\xff", "--amount", "5"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    csv_file = tmp_path / "latin1.csv"
    csv_file.write_bytes(b"reference,amount\nGOOD-1,100\nBAD\xff,200\n")
    imported = _run(["transfer", "import", str(csv_file)], env)
    listed = _run(["transfer", "expect", "--reference", "GOOD-1", "--amount", "100"], env)
    assert argument.returncode == 2 and "--reference" in argument.stderr
    assert "Traceback" not in argument.stderr
    assert imported.returncode == 2 and "not a readable CSV file" in imported.stderr
    assert listed.returncode == 0 and "already registered" not in listed.stdout
