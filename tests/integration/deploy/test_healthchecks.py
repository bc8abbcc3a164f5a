"""The image's HEALTHCHECK command, run for real against a receiver (slim has no curl)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.processes import payrecon_env, serving
from tests.support.servers import free_port

DOCKERFILE = Path(__file__).resolve().parents[3] / "deploy" / "Dockerfile"


def _healthcheck_argv(port: int) -> list[str]:
    """The Dockerfile's HEALTHCHECK CMD, aimed at `port` instead of the image's 8000."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    [line] = [line for line in text.splitlines() if line.startswith("HEALTHCHECK ")]
    argv = json.loads(line.split(" CMD ", 1)[1])
    assert argv[0] == "python" and "127.0.0.1:8000/healthz" in argv[-1]
    return [sys.executable, *argv[1:-1], argv[-1].replace(":8000/", f":{port}/")]


def _run(argv: list[str]) -> int:
    return subprocess.run(argv, capture_output=True, timeout=30, check=False).returncode


def test_healthcheck_passes_against_a_live_receiver(tmp_path: Path) -> None:
    """The check exits 0 while `payrecon serve` answers /healthz."""
    env = payrecon_env(database_url=f"sqlite:///{tmp_path / 'ledger.db'}")
    with serving(env, log=tmp_path / "receiver.log") as base:
        port = int(base.rsplit(":", 1)[1])
        assert _run(_healthcheck_argv(port)) == 0


def test_healthcheck_fails_when_nothing_listens() -> None:
    """The check exits non-zero when the receiver is gone."""
    assert _run(_healthcheck_argv(free_port())) != 0
