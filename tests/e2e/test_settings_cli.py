"""Settings as a user meets them on the command line: misspelt names, postgres:// URLs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.processes import PAYRECON, payrecon_env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PAYRECON, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_a_misspelt_database_url_warns_and_creates_no_ledger(tmp_path: Path) -> None:
    """`PAYRECON_DATABSE_URL` gets one warning naming PAYRECON_DATABASE_URL, and `report`, now
    on the default ./payrecon.db which does not exist, exits 2 naming it instead of creating
    an empty ledger and printing an empty report."""
    env = payrecon_env(databse_url=f"sqlite:///{tmp_path}/real.db")
    result = _run(["report"], env, tmp_path)
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and result.stdout == ""
    assert len(lines) == 2
    warning = json.loads(lines[0])
    assert warning["level"] == "warning"
    assert warning["event"] == (
        "PAYRECON_DATABSE_URL is not a payrecon setting and is ignored "
        "(did you mean PAYRECON_DATABASE_URL?)"
    )
    assert lines[1].startswith("payrecon: no ledger at ./payrecon.db (PAYRECON_DATABASE_URL)")
    assert not (tmp_path / "payrecon.db").exists()


def test_an_unknown_name_does_not_stop_the_command(database_url: str, tmp_path: Path) -> None:
    """A name set both in the environment and in .env warns once, and the command still runs."""
    (tmp_path / ".env").write_text("PAYRECON_STALE_AFTR=60\n")
    env = payrecon_env(database_url=database_url, stale_aftr="60")
    result = _run(["transfer", "expect", "--reference", "W-1", "--amount", "100"], env, tmp_path)
    assert result.returncode == 0 and "W-1: registered" in result.stdout
    (line,) = result.stderr.splitlines()
    assert "PAYRECON_STALE_AFTR" in line and "PAYRECON_STALE_AFTER" in line


def test_postgres_and_postgresql_urls_both_work(postgres_url: str, tmp_path: Path) -> None:
    """The same PostgreSQL ledger is reachable as postgres:// and postgresql:// (psycopg)."""
    rest = postgres_url.partition("://")[2]
    results = [
        _run(
            ["transfer", "expect", "--reference", f"U-{scheme}", "--amount", "100"],
            payrecon_env(database_url=f"{scheme}://{rest}"),
            tmp_path,
        )
        for scheme in ("postgres", "postgresql")
    ]
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    listed = _run(
        ["report", "--format", "json"], payrecon_env(database_url=f"postgres://{rest}"), tmp_path
    )
    assert listed.returncode == 0 and json.loads(listed.stdout)["transfers"]["total"] == 2


def test_the_shipped_env_example_is_refused_naming_its_placeholder(
    database_url: str, tmp_path: Path
) -> None:
    """`.env.example` copied to .env as-is stops a command with exit 2 and one line naming
    PAYRECON_RELAY_KEYS, whose value it never shows."""
    example = Path(__file__).resolve().parents[2] / ".env.example"
    (tmp_path / ".env").write_text(example.read_text())
    env = payrecon_env(database_url=database_url)
    del env["PAYRECON_RELAY_ALLOW_NETWORKS"]  # the file alone decides
    result = _run(["endpoints", "list"], env, tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("payrecon: PAYRECON_RELAY_KEYS: still holds the shipped placeholder")
    assert "CHANGE_ME_to_32" not in line
