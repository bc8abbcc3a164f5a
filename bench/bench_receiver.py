"""Receiver throughput and latency against a bare Starlette ceiling, in one run.

Each server runs pinned to CPU 0 and wrk (64 connections, unique events) to CPU 1, so the
load generator is not the bottleneck. The three servers are measured in rounds (ceiling,
SQLite, PostgreSQL, then again), each receiver against the ceiling of its own round, and the
verdict uses the median of the rounds: on a shared VM whose speed drifts by a quarter within
minutes, one adjacent pair is a fair comparison and one run is not. Figures are written to
bench/results/receiver.md.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.servers import free_port, wait_for_port  # noqa: E402

DURATION = int(os.environ.get("BENCH_SECONDS", "10"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
# A worktree of an earlier commit: each round then serves it too, just before this tree.
BASE = os.environ.get("BENCH_BASE")
CONNECTIONS = 64
# The target: share of the ceiling's throughput, and p99 latency.
TARGETS = {"sqlite": 0.4, "postgresql": 0.3}
P99_LIMIT_MS = 50.0
PG_ADMIN = os.environ.get("PAYRECON_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@dataclass
class Result:
    """One wrk run."""

    name: str
    rps: float
    p50_ms: float
    p99_ms: float
    non_2xx: int


def _ms(text: str) -> float:
    match = re.match(r"([\d.]+)(us|ms|s|m)$", text)
    if match is None:
        raise ValueError(f"cannot read a latency from {text!r}")
    number, unit = match.groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def run_wrk(name: str, port: int) -> Result:
    """Warm up, then load the server for DURATION seconds."""
    script = str(ROOT / "bench" / "unique_events.lua")
    base = [
        "taskset",
        "-c",
        "1",
        "wrk",
        "-t",
        "2",
        "-c",
        str(CONNECTIONS),
        "-s",
        script,
        "--latency",
        "--timeout",
        "5s",
    ]
    subprocess.run([*base, "-d", "2s", f"http://127.0.0.1:{port}"], capture_output=True, check=True)
    out = subprocess.run(
        [*base, "-d", f"{DURATION}s", f"http://127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return Result(name, rps, p50, p99, int(bad.group(1)) if bad else 0)


def serve(
    command: list[str], env: dict[str, str], port: int, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start a server pinned to CPU 0 and wait for it.

    `cwd`: the tree a `python -m payrecon` command runs. It must be given for any tree but
    this one: `-m` puts the working directory first on sys.path, ahead of PYTHONPATH."""
    process = subprocess.Popen(
        ["taskset", "-c", "0", *command],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, timeout=30)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def bench_bare() -> Result:
    """The ceiling."""
    port = free_port()
    process = serve(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "bench.bare_app:create_app",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        {**os.environ, "PYTHONPATH": str(ROOT)},
        port,
    )
    try:
        return run_wrk("bare Starlette JSON endpoint (ceiling)", port)
    finally:
        stop(process)


def bench_receiver(name: str, database_url: str, tree: Path = ROOT) -> Result:
    """The full receiver: validation, raw archive, event and transfer rows, durable commit;
    `tree` is the checkout served (BENCH_BASE: an earlier commit's worktree)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYRECON_", "OTEL_"))}
    env["PAYRECON_DATABASE_URL"] = database_url
    env["PYTHONPATH"] = str(tree)
    subprocess.run(
        [sys.executable, "-m", "payrecon", "db", "upgrade"],
        env=env,
        check=True,
        capture_output=True,
        cwd=tree,
    )
    process = serve(
        [sys.executable, "-m", "payrecon", "serve", "--port", str(port)], env, port, cwd=tree
    )
    try:
        return run_wrk(name, port)
    finally:
        stop(process)


def _pg_database() -> str | None:
    try:
        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute("DROP DATABASE IF EXISTS payrecon_bench")
            conn.execute("CREATE DATABASE payrecon_bench")
    except psycopg.Error as exc:
        print(f"PostgreSQL unavailable, skipping: {exc}")
        return None
    return (
        PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
        + "/payrecon_bench"
    )


def _round(workdir: Path, number: int) -> dict[str, Result]:
    """Ceiling, then each receiver on a fresh database."""
    results = {"ceiling": bench_bare()}
    base = Path(BASE) if BASE else None
    if base is not None:
        results["base sqlite"] = bench_receiver(
            f"receiver at BENCH_BASE ({_commit(base)}), SQLite",
            f"sqlite:///{workdir}/base-{number}.db",
            base,
        )
    results["sqlite"] = bench_receiver(
        "receiver, SQLite (WAL, synchronous=FULL)", f"sqlite:///{workdir}/bench-{number}.db"
    )
    pg = _pg_database()
    if pg and base is not None:
        results["base postgresql"] = bench_receiver(
            f"receiver at BENCH_BASE ({_commit(base)}), PostgreSQL", pg, base
        )
        pg = _pg_database()
    if pg:
        results["postgresql"] = bench_receiver("receiver, PostgreSQL", pg)
    return results


def _commit(tree: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()


def _report(rounds: list[dict[str, Result]]) -> str:
    lines = [
        "Command: `make bench` (bench/bench_receiver.py), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores; "
        f"server pinned to CPU 0, wrk -t2 -c{CONNECTIONS} -d{DURATION}s pinned to CPU 1, "
        f"unique transfer.success events; {len(rounds)} rounds, each receiver against the "
        "ceiling of its own round.",
        "",
        "| round | server | requests/s | × ceiling | p50 ms | p99 ms | non-2xx |",
        "|---|---|---|---|---|---|---|",
    ]
    for number, results in enumerate(rounds, 1):
        ceiling = results["ceiling"].rps
        for r in results.values():
            lines.append(
                f"| {number} | {r.name} | {r.rps:,.0f} | {r.rps / ceiling:.2f} | "
                f"{r.p50_ms:.2f} | {r.p99_ms:.2f} | {r.non_2xx} |"
            )
    lines += [
        "",
        "| server | median × ceiling | median p99 ms | target | met |",
        "|---|---|---|---|---|",
    ]
    for key, target in TARGETS.items():
        measured = [results for results in rounds if key in results]
        if not measured:
            continue
        ratio = statistics.median(r[key].rps / r["ceiling"].rps for r in measured)
        p99 = statistics.median(r[key].p99_ms for r in measured)
        errors = sum(r[key].non_2xx for r in measured)
        met = ratio >= target and p99 < P99_LIMIT_MS and errors == 0
        lines.append(
            f"| {measured[0][key].name} | {ratio:.2f} | {p99:.2f} | "
            f"≥ {target}×, p99 < {P99_LIMIT_MS:.0f} ms | {'yes' if met else 'no'} |"
        )
    compared = [r for r in rounds if "base sqlite" in r]
    if compared:
        lines += [
            "",
            "| database | median this / BENCH_BASE (same round) | rounds |",
            "|---|---|---|",
        ]
        for key in ("sqlite", "postgresql"):
            pairs = [r for r in compared if key in r and f"base {key}" in r]
            if pairs:
                each = [r[key].rps / r[f"base {key}"].rps for r in pairs]
                shown = ", ".join(f"{x:.2f}" for x in each)
                lines.append(f"| {key} | {statistics.median(each):.2f} | {shown} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Measure the three servers side by side, round after round, and record them."""
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (make bench installs it)")
    workdir = Path(tempfile.mkdtemp(prefix="payrecon-bench-"))
    try:
        rounds = [_round(workdir, number) for number in range(1, ROUNDS + 1)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    text = _report(rounds)
    print(text)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "receiver.md").write_text(text)


if __name__ == "__main__":
    main()
