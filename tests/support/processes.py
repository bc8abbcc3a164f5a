"""Start `payrecon` commands as real subprocesses, the way a user runs them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from tests.support.servers import free_port, wait_for_port

PAYRECON = [sys.executable, "-m", "payrecon"]


def payrecon_env(**settings: str) -> dict[str, str]:
    """The current environment without PAYRECON_* variables, plus `settings` (PAYRECON_ added).

    Relay endpoints may be on loopback (test consumers listen there): PAYRECON_RELAY_ALLOW_NETWORKS
    is 127.0.0.0/8 unless `settings` say otherwise (`relay_allow_networks=""`: the default rule).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYRECON_")}
    env["PAYRECON_RELAY_ALLOW_NETWORKS"] = "127.0.0.0/8"
    env.update({f"PAYRECON_{key.upper()}": value for key, value in settings.items()})
    return env


def start_serve(
    env: dict[str, str],
    *,
    port: int | None = None,
    log: Path | None = None,
    args: Sequence[str] = (),
) -> tuple[subprocess.Popen[bytes], int]:
    """Start `payrecon serve` (with extra `args`) on a free port and wait until it listens."""
    port = port or free_port()
    output = log.open("ab") if log is not None else subprocess.DEVNULL
    process = subprocess.Popen(
        [*PAYRECON, "serve", "--port", str(port), *args], env=env, stdout=output, stderr=output
    )
    try:
        wait_for_port(port, timeout=30)
    except TimeoutError:
        process.kill()
        raise
    return process, port


def stop(process: subprocess.Popen[bytes], *, kill: bool = False) -> None:
    """Stop a process (SIGKILL when `kill`), and reap it."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    if process.poll() is None:
        process.kill()
        process.wait(timeout=5)


@contextlib.contextmanager
def serving(env: dict[str, str], *, log: Path | None = None) -> Iterator[str]:
    """A `payrecon serve` subprocess for the duration of the block; yields its base URL."""
    process, port = start_serve(env, log=log)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)
