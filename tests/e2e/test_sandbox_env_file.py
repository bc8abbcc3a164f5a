"""`payrecon sandbox` reads its keys from `.env` like every other payrecon command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.support.processes import PAYRECON, payrecon_env
from tests.support.servers import free_port, wait_for_port

SECRET = "sk_test_fromdotenvfile0123456789"


def _first_lines(process: subprocess.Popen[str], count: int) -> list[str]:
    assert process.stdout is not None
    return [process.stdout.readline().rstrip("\n") for _ in range(count)]


def test_the_sandbox_started_by_the_cli_accepts_the_key_in_dotenv(tmp_path: Path) -> None:
    """A `.env` in the working directory with PAYRECON_SANDBOX_SECRET_KEY: the sandbox prints
    that key and answers the provider API with it, and refuses another key."""
    (tmp_path / ".env").write_text(f"PAYRECON_SANDBOX_SECRET_KEY={SECRET}\n")
    port = free_port()
    process = subprocess.Popen(
        [*PAYRECON, "sandbox", "--port", str(port), "--complete-after", "never"],
        cwd=tmp_path,
        env=payrecon_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _first_lines(process, 4)
        wait_for_port(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            ours = client.get("/v1/banks", headers={"Authorization": f"Bearer {SECRET}"})
            other = client.get(
                "/v1/banks", headers={"Authorization": "Bearer sk_test_notthekey0123456789"}
            )
    finally:
        process.terminate()
        process.communicate(timeout=15)
    assert lines[0] == f"secret key: {SECRET}"
    assert ours.status_code == 200
    assert other.status_code == 401


def test_the_environment_wins_over_dotenv(tmp_path: Path) -> None:
    """A key set in the environment is used although `.env` names another (as for settings)."""
    (tmp_path / ".env").write_text(f"PAYRECON_SANDBOX_SECRET_KEY={SECRET}\n")
    port = free_port()
    env = payrecon_env(sandbox_secret_key="sk_test_fromtheenvironment01")
    process = subprocess.Popen(
        [*PAYRECON, "sandbox", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _first_lines(process, 1)
    finally:
        process.terminate()
        process.communicate(timeout=15)
    assert lines == ["secret key: sk_test_fromtheenvironment01"]
