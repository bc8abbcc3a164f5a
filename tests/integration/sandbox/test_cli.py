"""The CLI as a user runs it: start lines, keys from options or environment, bad options."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import httpx
import pytest
from click.testing import CliRunner

from sandbox.cli import command
from tests.support.servers import free_port, wait_for_port


def test_python_m_sandbox_prints_keys_otp_and_serves(tmp_path):
    """`python -m sandbox` prints its keys, otp and address, then answers with that key."""
    port = free_port()
    env = {**os.environ, "PAYRECON_SANDBOX_SECRET_KEY": "sk_test_fromenvironment1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--port", str(port), "--complete-after", "never"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lines = [process.stdout.readline().rstrip("\n") for _ in range(4)]
        wait_for_port(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            ok = client.get("/v1/banks", headers={"Authorization": f"Bearer {lines[0][12:]}"})
            public = client.get("/v1/banks", headers={"Authorization": f"Bearer {lines[1][12:]}"})
    finally:
        process.terminate()
        process.communicate(timeout=15)
    assert lines[0] == "secret key: sk_test_fromenvironment1"
    assert re.fullmatch(r"public key: pk_test_[0-9a-f]{32}", lines[1])
    assert re.fullmatch(r"otp: [0-9]{6}", lines[2])
    assert lines[3] == f"listening on http://127.0.0.1:{port}"
    assert ok.status_code == 200
    assert public.status_code == 200


@pytest.mark.parametrize(
    "args",
    [
        ["--faults", "webhook_explode=1"],
        ["--faults", "webhook_drop=2"],
        ["--faults", "webhook_drop"],
        ["--environment", "staging"],
        ["--complete-after", "soon"],
        ["--secret-key", "sk_live_abcdefgh12345"],
        ["--secret-key", "sk_test_"],
        ["--public-key", "sk_test_abcdefgh12345"],
        ["--otp", "12345"],
        ["--port", "http"],
        ["--wallet", "-5"],
        ["--webhook-standard-secret", "nope"],
    ],
)
def test_bad_option_exits_2_with_one_line(args):
    """Each unusable option stops the command with exit 2 and exactly one error line."""
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert result.output.startswith("Error: ")


def test_a_short_secret_key_with_the_prefix_is_accepted_and_authenticates():
    """`--secret-key sk_test_accept` starts the sandbox, which then accepts that key only."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sandbox",
            "--port",
            str(port),
            "--secret-key",
            "sk_test_accept",
            "--complete-after",
            "never",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = process.stdout.readline().rstrip("\n")
        wait_for_port(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            ok = client.get("/v1/banks", headers={"Authorization": "Bearer sk_test_accept"})
            other = client.get("/v1/banks", headers={"Authorization": "Bearer sk_test_accepT"})
    finally:
        process.terminate()
        process.communicate(timeout=15)
    assert first == "secret key: sk_test_accept"
    assert ok.status_code == 200
    assert other.status_code == 401
