"""Run a command on a real pseudo-terminal, answering its prompts as a person at a shell would."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from collections.abc import Sequence
from dataclasses import dataclass

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@dataclass(frozen=True)
class TerminalRun:
    """How the command ended and everything it showed (colours removed, `\\n` line ends)."""

    exit_code: int
    output: str


def run_on_terminal(
    args: Sequence[str],
    env: dict[str, str],
    *,
    answers: Sequence[tuple[str, str]] = (),
    columns: int = 80,
    timeout: float = 60.0,
) -> TerminalRun:
    """Run `args` with stdin, stdout and stderr on one pty `columns` wide.

    `answers` are (prompt text, reply) pairs: each reply is typed, with Enter, once its
    prompt has appeared, in order. The command is killed if it outlives `timeout`.
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(
        list(args),
        env={**env, "COLUMNS": str(columns), "TERM": "xterm"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    output = b""
    seen = 0  # output before this offset has already answered a prompt
    pending = list(answers)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal, the command is done
                break
            if not chunk:
                break
            output += chunk
            if pending and pending[0][0].encode() in output[seen:]:
                seen = len(output)
                os.write(master, pending.pop(0)[1].encode() + b"\r")
        exit_code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        os.close(master)
    text = _ANSI.sub(b"", output).decode("utf-8", "replace").replace("\r\n", "\n")
    return TerminalRun(exit_code, text)
