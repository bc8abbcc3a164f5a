"""The shell walkthroughs of docs/sandbox.md, run as printed (only the ports are free ones)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.docs import marked_block, marked_blocks, missing_lines, run_shell, with_ports
from tests.support.processes import payrecon_env
from tests.support.servers import free_port


def _shell_env(tmp_path: Path) -> dict[str, str]:
    """A user's shell: this venv's `payrecon` first on PATH, no PAYRECON_* set, temp in tmp_path."""
    if shutil.which("curl") is None:
        pytest.skip("the walkthroughs use curl")
    env = payrecon_env()
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    env["TMPDIR"] = str(tmp_path)
    return env


def test_the_keys_example_answers_as_printed(tmp_path: Path) -> None:
    """Its own key gets the bank list; the live key and another test key get Unauthenticated."""
    block = marked_block("sandbox.md", "sandbox-keys")
    code = with_ports(block.code, {8100: free_port()})
    status, output = run_shell(code, cwd=tmp_path, env=_shell_env(tmp_path), timeout=120)
    assert status == 0, output
    assert block.output and not missing_lines(block.output, output), output
    assert output.count('"Unauthenticated"') == 2


def test_the_five_minute_walkthrough_runs_as_printed(tmp_path: Path) -> None:
    """Every step's commands succeed and print what the guide shows (references, times aside)."""
    blocks = marked_blocks("sandbox.md", "sandbox-walkthrough")
    script = "\n".join(block.code for block in blocks)
    code = with_ports(script, {8100: free_port(), 8000: free_port()})
    status, output = run_shell(code, cwd=tmp_path, env=_shell_env(tmp_path), timeout=300)
    assert status == 0, output
    printed = "\n".join(block.output for block in blocks)
    assert printed.count("\n") > 20, "the walkthrough shows its outputs"
    assert not missing_lines(printed, output), output
    # The report's figures are given in a comment on its command line.
    [report] = [line for line in script.splitlines() if line.startswith("payrecon report")]
    figures = re.findall(r"₦[\d,]+\.\d\d", report.partition("#")[2])
    assert figures and all(figure in output for figure in figures), output
