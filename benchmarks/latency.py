"""Write -> delivery latency on the console sink, and the agent's idle CPU.

Run from the repository root::

    .venv/bin/python -m benchmarks.latency [--rate 1000] [--files 100] [--secs 20] [--idle-secs 30] [--runs 3]

A writer in this process appends CRI lines to ``--files`` files at ``--rate``
lines per second in total (10 ms ticks, round-robin); every message carries
its write time (``time.time_ns()``). The agent (``logagent run``, offline: an
empty metadata snapshot) tails them; its stdout is a pipe read by a thread
here that timestamps each record as it arrives. Latency = arrival - write time,
measured after a warm-up. Then the writer stops and the agent's CPU time
(utime+stime from /proc/<pid>/stat) is sampled over ``--idle-secs`` with no
new lines. Results are printed as markdown tables (each run, and medians).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.agent_runs import CONSOLE, agent_args, agent_config, work_directory
from benchmarks.common import REPO, cpu_seconds, median, stop_process, table

CRI_PREFIX = b"2026-12-02T10:00:00.000000000Z stdout F "
MARK = b'"message":"lat '
P99_TARGET_MS = 250.0
IDLE_TARGET_PERCENT = 0.5


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


class Arrivals:
    """Reads the agent's stdout; keeps (arrival - write) for every record written after ``since_ns``."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.stream = stream
        self.latencies_ms: list[float] = []
        self.count = 0
        self.since_ns = 0
        self.last_arrival = 0.0
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.stream:
            now = time.time_ns()
            self.count += 1
            self.last_arrival = time.monotonic()
            start = line.find(MARK)
            if start < 0:
                continue
            start += len(MARK)
            written = int(line[start : line.index(b" ", start)])
            if written >= self.since_ns:
                self.latencies_ms.append((now - written) / 1e6)


def write_lines(files: list, rate: int, secs: float) -> int:  # type: ignore[type-arg]
    """Append ``rate`` lines/s spread over ``files`` for ``secs``; returns how many were written."""
    tick = 0.01
    per_tick = rate * tick
    written = 0
    due = 0.0
    start = time.monotonic()
    index = 0
    while (elapsed := time.monotonic() - start) < secs:
        due += per_tick
        while written < due:
            f = files[index % len(files)]
            index += 1
            f.write(CRI_PREFIX + b"lat %d seq %09d padding-padding-padding-padding\n" % (time.time_ns(), written))
            written += 1
        next_tick = start + (int(elapsed / tick) + 1) * tick
        time.sleep(max(0.0, next_tick - time.monotonic()))
    return written


def wait_for_started(stderr_path: Path, proc: subprocess.Popen, timeout: float = 30.0) -> None:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if b'"started"' in stderr_path.read_bytes():
            return
        if proc.poll() is not None:
            raise RuntimeError(f"agent exited: {stderr_path.read_text()[-2000:]}")
        time.sleep(0.05)
    raise RuntimeError("agent did not start")


def one_run(workdir: Path, args: argparse.Namespace, tag: str) -> dict[str, float]:
    log_dir = workdir / f"pods-{tag}"
    handles = []
    for i in range(args.files):
        directory = log_dir / f"bench_writer-{i:03d}_uid-{tag}-{i:03d}" / "app"
        directory.mkdir(parents=True)
        handles.append(open(directory / "0.log", "ab", buffering=0))
    snapshot = workdir / "empty.json"
    snapshot.write_text('{"kind": "List", "apiVersion": "v1", "items": []}')
    config = agent_config(
        workdir / f"agent-{tag}.yaml", log_dir=log_dir, data_dir=workdir / f"data-{tag}",
        kubernetes=f"{{node_name: x, snapshot: {snapshot}}}",
        pipeline=CONSOLE,
    )
    stderr_path = workdir / f"agent-{tag}.stderr"
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(agent_args(config, once=False), cwd=REPO, stdout=subprocess.PIPE, stderr=err)
    try:
        wait_for_started(stderr_path, proc)
        arrivals = Arrivals(proc.stdout)
        arrivals.since_ns = time.time_ns() + int(args.warmup * 1e9)
        cpu_before = cpu_seconds(proc.pid)
        load_start = time.monotonic()
        written = write_lines(handles, args.rate, args.warmup + args.secs)
        load_secs = time.monotonic() - load_start
        deadline = time.monotonic() + 10
        while arrivals.count < written and time.monotonic() < deadline:
            time.sleep(0.05)
        cpu_load = cpu_seconds(proc.pid) - cpu_before
        time.sleep(1.0)  # let the last acknowledgements and checkpoint flush settle
        idle_before = cpu_seconds(proc.pid)
        time.sleep(args.idle_secs)
        idle_cpu = cpu_seconds(proc.pid) - idle_before
    finally:
        stop_process(proc)
        for handle in handles:
            handle.close()
    values = sorted(arrivals.latencies_ms)
    if arrivals.count < written:
        raise RuntimeError(f"only {arrivals.count} of {written} records arrived")
    return {
        "records": len(values),
        "median": percentile(values, 0.5),
        "p90": percentile(values, 0.9),
        "p99": percentile(values, 0.99),
        "max": values[-1] if values else float("nan"),
        "load_cpu_percent": 100 * cpu_load / load_secs,
        "idle_cpu_percent": 100 * idle_cpu / args.idle_secs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=1000, help="lines per second, all files together")
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--secs", type=float, default=20.0, help="measured seconds of load (after --warmup)")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--idle-secs", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    results = []
    with work_directory("logagent-latency-") as workdir:
        for i in range(args.runs):
            results.append(one_run(workdir, args, f"r{i}"))
            r = results[-1]
            print(f"run {i + 1}: p50 {r['median']:.1f} ms p99 {r['p99']:.1f} ms idle {r['idle_cpu_percent']:.3f}%",
                  file=sys.stderr)
    keys = ["records", "median", "p90", "p99", "max", "load_cpu_percent", "idle_cpu_percent"]
    headers = ["run", "records", "p50 ms", "p90 ms", "p99 ms", "max ms", "CPU % under load", f"CPU % idle ({args.idle_secs:.0f} s)"]
    print(f"## Latency: {args.rate} lines/s over {args.files} files, console sink to a pipe "
          f"({args.secs:.0f} s measured after {args.warmup:.0f} s warm-up)\n")
    rows = [[i + 1] + [r[k] for k in keys] for i, r in enumerate(results)]
    rows.append(["median"] + [median([r[k] for r in results]) for k in keys])
    print(table(headers, rows))
    print()
    p99 = median([r["p99"] for r in results])
    idle = median([r["idle_cpu_percent"] for r in results])
    print(table(["target", "measured", "goal", ""], [
        ["p99 write -> delivery", f"{p99:.1f} ms", f"< {P99_TARGET_MS:.0f} ms", "met" if p99 < P99_TARGET_MS else "MISSED"],
        ["idle CPU (no new lines)", f"{idle:.3f} % of a core", f"< {IDLE_TARGET_PERCENT} %",
         "met" if idle < IDLE_TARGET_PERCENT else "MISSED"],
    ]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
