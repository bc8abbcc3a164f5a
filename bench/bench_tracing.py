"""The receiver with tracing off against the code before tracing existed, and with tracing on
against off, interleaved in one run (issue 28: off within noise of before; on ≥ 0.85× of off).

Each round serves the webhook on SQLite three times, pinned to CPU 0 with wrk on CPU 1, as
bench/bench_receiver.py does: `before` runs the tree at BENCH_BASE (a checkout of main at this
branch's start), `off` this tree, `on` this tree with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
sink (bench/otlp_sink.py, on CPU 1 with wrk). Figures go to bench/results/tracing.md.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_receiver import Result, run_wrk, serve, stop  # noqa: E402

from tests.support.servers import free_port, wait_for_port  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
BASE = os.environ.get("BENCH_BASE")
# The standard sampler variables: one trace in ten recorded (a webhook's spans are then
# non-recording, which costs far less than recording and exporting them).
SAMPLED = {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}


def _receiver(tree: Path, database_url: str, extra: dict[str, str]) -> Result:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYRECON_", "OTEL_"))}
    env.update(extra, PAYRECON_DATABASE_URL=database_url, PYTHONPATH=str(tree))
    command = [sys.executable, "-m", "payrecon"]
    subprocess.run([*command, "db", "upgrade"], env=env, check=True, capture_output=True, cwd=tree)
    port = free_port()
    # cwd: `-m` puts the working directory ahead of PYTHONPATH (bench_receiver.serve).
    process = serve([*command, "serve", "--port", str(port)], env, port, cwd=tree)
    try:
        return run_wrk(str(tree), port)
    finally:
        stop(process)


def main() -> None:
    """Interleave before / off / on, ROUNDS times, and record the ratios."""
    if BASE is None:
        sys.exit("set BENCH_BASE to a checkout of main at this branch's start")
    sink_port = free_port()
    sink = subprocess.Popen(
        [
            "taskset", "-c", "1", sys.executable, "-m", "uvicorn", "--factory",
            "bench.otlp_sink:create_app", "--port", str(sink_port), "--log-level", "warning",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    wait_for_port(sink_port, timeout=30)
    workdir = Path(tempfile.mkdtemp(prefix="payrecon-tracing-"))
    rounds: list[dict[str, Result]] = []
    try:
        for n in range(ROUNDS):
            on = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink_port}"}
            rounds.append(
                {
                    "before": _receiver(Path(BASE), f"sqlite:///{workdir}/b{n}.db", {}),
                    "off": _receiver(ROOT, f"sqlite:///{workdir}/f{n}.db", {}),
                    "on": _receiver(ROOT, f"sqlite:///{workdir}/n{n}.db", on),
                    "sampled": _receiver(ROOT, f"sqlite:///{workdir}/s{n}.db", {**on, **SAMPLED}),
                }
            )
    finally:
        stop(sink)
        shutil.rmtree(workdir, ignore_errors=True)
    lines = [
        f"Command: `BENCH_BASE=… python bench/bench_tracing.py`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load "
        f"average {os.getloadavg()[0]:.1f} after the run; SQLite, wrk -c64 on CPU 1, server on "
        "CPU 0, rounds interleaved (before, off, on).",
        "",
        "| round | before req/s | off req/s | on req/s | 10 % sampled req/s | off / before "
        "| on / off | sampled / off | on p99 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(rounds, 1):
        lines.append(
            f"| {n} | {r['before'].rps:,.0f} | {r['off'].rps:,.0f} | {r['on'].rps:,.0f} | "
            f"{r['sampled'].rps:,.0f} | {r['off'].rps / r['before'].rps:.2f} | "
            f"{r['on'].rps / r['off'].rps:.2f} | {r['sampled'].rps / r['off'].rps:.2f} | "
            f"{r['on'].p99_ms:.1f} |"
        )
    off_before = statistics.median(r["off"].rps / r["before"].rps for r in rounds)
    on_off = statistics.median(r["on"].rps / r["off"].rps for r in rounds)
    sampled_off = statistics.median(r["sampled"].rps / r["off"].rps for r in rounds)
    errors = sum(r[k].non_2xx for r in rounds for k in r)
    lines += [
        "",
        f"Median off / before: {off_before:.2f}; median on / off: {on_off:.2f} (target ≥ 0.85); "
        f"median 10 % sampled / off: {sampled_off:.2f}; "
        f"non-2xx answers: {errors}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "tracing.md").write_text(text)


if __name__ == "__main__":
    main()
