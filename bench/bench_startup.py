"""Benchmark how long `payrecon --help` and `--version` take to start, against bare Python.

Run: .venv/bin/python bench/bench_startup.py [--runs 20] [--results FILE]

Uses hyperfine when it is installed; otherwise runs each command `--runs` times in a bounded
loop of subprocesses. Reports the median wall time of each; `python -c pass` is the floor that
no command can go under, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
PAYRECON = str(Path(PYTHON).with_name("payrecon"))
COMMANDS = {
    "python -c pass (floor)": [PYTHON, "-c", "pass"],
    "payrecon --version": [PAYRECON, "--version"],
    "payrecon --help": [PAYRECON, "--help"],
}


def _clean_env() -> dict[str, str]:
    # No PAYRECON_* variables: neither flag reads settings, and a warning would add noise.
    return {k: v for k, v in os.environ.items() if not k.startswith("PAYRECON_")}


def loop_median(argv: list[str], runs: int) -> float:
    """Median seconds of `runs` runs of `argv` (after one warm-up run)."""
    env = _clean_env()
    subprocess.run(argv, env=env, capture_output=True, check=True)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def hyperfine_median(argv: list[str], runs: int) -> float:
    """Median seconds of `runs` runs of `argv`, as hyperfine measures it."""
    with tempfile.TemporaryDirectory() as directory:
        export = Path(directory) / "out.json"
        subprocess.run(
            [
                "hyperfine",
                "--warmup",
                "1",
                "--runs",
                str(runs),
                "-N",
                "--export-json",
                str(export),
                " ".join(argv),
            ],
            env=_clean_env(),
            capture_output=True,
            check=True,
        )
        return float(json.loads(export.read_text())["results"][0]["median"])


def main() -> int:
    """Measure, print a Markdown table, and write it to --results when given."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    tool = "hyperfine" if shutil.which("hyperfine") else "subprocess loop"
    measure = hyperfine_median if tool == "hyperfine" else loop_median
    medians = {name: measure(argv, args.runs) for name, argv in COMMANDS.items()}
    floor = medians["python -c pass (floor)"]
    lines = [
        f"Start-up, median of {args.runs} runs ({tool}), Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        "| command | median s | over the floor s |",
        "|---|---|---|",
        *(
            f"| `{name}` | {seconds:.3f} | {seconds - floor:.3f} |"
            for name, seconds in medians.items()
        ),
    ]
    text = "\n".join(lines)
    print(text)
    if args.results:
        args.results.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
