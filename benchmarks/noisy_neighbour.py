"""Noisy neighbour: how long a quiet pod's line waits when another pod writes as fast as it can.

Run from the repository root::

    .venv/bin/python -m benchmarks noisy-neighbour [--secs 60] [--runs 3] [--noisy-mbps 50] [--quiet-pods 50]

Fifty quiet pods (each in its own namespace) write 10 CRI lines per second
each, every message carrying its write time (``time.time_ns()``), from a
thread of this process; one noisy pod (namespace ``noisy``) is a separate
process appending 200 B lines in 64 KiB writes at up to ``--noisy-mbps``
(what the disk and the machine allow). The agent (``logagent run``, offline:
an empty snapshot) tails them into one console sink whose stdout is a pipe
read here: each quiet record's delay is its arrival time minus its write
time; noisy records are counted per second of arrival. Three variants run
interleaved in each round: quiet pods alone, with the noisy pod, and with the
noisy pod under ``throttle`` (``threshold: 1000``, ``window_secs: 1``, key
``{{ kubernetes.pod_namespace }}``). The agent's CPU (utime+stime from /proc)
is reported per variant. Figures are per run and medians over ``--runs``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.agent_runs import agent_args, agent_config, work_directory
from benchmarks.common import PYTHON, REPO, cpu_seconds, median, stop_process, table
from benchmarks.latency import percentile, wait_for_started, write_lines

QUIET_RATE = 10  # lines per second per quiet pod
NOISY_LINE = 200
THRESHOLD = 1000
P99_TARGET_MS, MAX_TARGET_MS = 250.0, 1000.0

NOISY_WRITER = """
import os, sys, time
path, rate, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
prefix = b"2026-12-02T10:00:00.000000000Z stdout F noisy "
line = prefix + b"x" * (%d - len(prefix) - 1) + b"\\n"
block = line * (65536 // len(line))
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
start = time.monotonic(); written = 0
while (elapsed := time.monotonic() - start) < secs:
    if written < elapsed * rate:
        written += os.write(fd, block)
    else:
        time.sleep(0.001)
print(written, time.monotonic() - start)
""" % NOISY_LINE

TRANSFORMS = {
    "quiet only": ("pods", ""),
    "with noisy": ("pods", ""),
    "noisy, throttled": ("thr", "transforms:\n  thr: {type: throttle, inputs: [pods], threshold: %d, window_secs: 1, "
                                "key_field: '{{ kubernetes.pod_namespace }}'}\n" % THRESHOLD),
}


class Sink:
    """Reads the agent's stdout: quiet records' delays, noisy records per second of arrival."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.stream = stream
        self.delays_ms: list[float] = []
        self.quiet = 0
        self.noisy_per_second: dict[int, int] = {}
        self.since_ns = 0
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        noisy = self.noisy_per_second
        for line in self.stream:
            now = time.time_ns()
            start = line.find(b'"message":"lat ')
            if start < 0:
                second = now // 1_000_000_000
                noisy[second] = noisy.get(second, 0) + 1
                continue
            self.quiet += 1
            start += len(b'"message":"lat ')
            written = int(line[start : line.index(b" ", start)])
            if written >= self.since_ns:
                self.delays_ms.append((now - written) / 1e6)


def one_run(workdir: Path, args: argparse.Namespace, variant: str, tag: str) -> dict[str, float]:
    log_dir = workdir / f"pods-{tag}"
    handles = []
    for i in range(args.quiet_pods):
        directory = log_dir / f"quiet-{i:02d}_writer-{i:02d}_uid-{tag}-{i:02d}" / "app"
        directory.mkdir(parents=True)
        handles.append(open(directory / "0.log", "ab", buffering=0))
    noisy_path = log_dir / f"noisy_spammer_uid-{tag}-noisy" / "app" / "0.log"
    noisy_path.parent.mkdir(parents=True)
    noisy_path.touch()
    snapshot = workdir / "empty.json"
    snapshot.write_text('{"kind": "List", "apiVersion": "v1", "items": []}')
    sink_input, transforms = TRANSFORMS[variant]
    config = agent_config(workdir / f"agent-{tag}.yaml", log_dir=log_dir, data_dir=workdir / f"data-{tag}",
                          kubernetes=f"{{node_name: x, snapshot: {snapshot}}}",
                          pipeline=transforms + f"sinks:\n  out: {{type: console, inputs: [{sink_input}]}}\n")
    stderr_path = workdir / f"agent-{tag}.stderr"
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(agent_args(config, once=False), cwd=REPO, stdout=subprocess.PIPE, stderr=err)
    noisy = None
    try:
        wait_for_started(stderr_path, proc)
        sink = Sink(proc.stdout)
        sink.since_ns = time.time_ns() + int(args.warmup * 1e9)
        total_secs = args.warmup + args.secs
        if variant != "quiet only":
            noisy = subprocess.Popen([PYTHON, "-c", NOISY_WRITER, str(noisy_path), str(args.noisy_mbps * 1e6),
                                      str(total_secs)], stdout=subprocess.PIPE)
        cpu_before, wall_before = cpu_seconds(proc.pid), time.monotonic()
        first_second = time.time_ns() // 1_000_000_000
        written = write_lines(handles, QUIET_RATE * args.quiet_pods, total_secs)
        cpu, wall = cpu_seconds(proc.pid) - cpu_before, time.monotonic() - wall_before
        last_second = time.time_ns() // 1_000_000_000
        noisy_bytes = int(noisy.communicate(timeout=60)[0].split()[0]) if noisy is not None else 0
        deadline = time.monotonic() + 30
        while sink.quiet < written and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        if noisy is not None and noisy.poll() is None:
            noisy.kill()
        stop_process(proc)
        for handle in handles:
            handle.close()
        noisy_path.unlink(missing_ok=True)  # gigabytes
    delays = sorted(sink.delays_ms)
    steady = [sink.noisy_per_second.get(s, 0) for s in range(first_second + 2, last_second - 1)]
    return {
        "quiet written": written, "quiet delivered": sink.quiet,
        "p50": percentile(delays, 0.5), "p99": percentile(delays, 0.99), "max": delays[-1] if delays else float("nan"),
        "noisy MB/s written": noisy_bytes / 1e6 / total_secs,
        "noisy/s delivered (mean)": sum(steady) / len(steady) if steady else 0.0,
        "noisy/s min": min(steady, default=0), "noisy/s max": max(steady, default=0),
        "agent CPU %": 100 * cpu / wall,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--secs", type=float, default=60.0, help="measured seconds (after --warmup)")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--noisy-mbps", type=float, default=50.0, help="the noisy pod's write rate cap, MB/s")
    parser.add_argument("--quiet-pods", type=int, default=50)
    parser.add_argument("--variants", nargs="*", default=list(TRANSFORMS), choices=list(TRANSFORMS))
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, float]]] = {v: [] for v in args.variants}
    with work_directory("logagent-noisy-") as workdir:
        for i in range(args.runs):
            for variant in args.variants:  # interleaved: the machine's drift hits every variant alike
                r = one_run(workdir, args, variant, f"r{i}-{variant.replace(' ', '').replace(',', '')}")
                results[variant].append(r)
                print(f"round {i + 1} {variant}: p50 {r['p50']:.0f} ms p99 {r['p99']:.0f} ms max {r['max']:.0f} ms, "
                      f"noisy {r['noisy/s delivered (mean)']:.0f}/s, CPU {r['agent CPU %']:.0f}%", file=sys.stderr)
    keys = list(next(iter(results.values()))[0])
    print(f"## Noisy neighbour: {args.quiet_pods} quiet pods x {QUIET_RATE} lines/s, one noisy pod of {NOISY_LINE} B "
          f"lines up to {args.noisy_mbps:g} MB/s; console sink to a pipe; {args.secs:g} s measured, {args.runs} rounds\n")
    rows = [[variant, i + 1] + [r[k] for k in keys] for variant, runs in results.items() for i, r in enumerate(runs)]
    rows += [[variant, "median"] + [median([r[k] for r in runs]) for k in keys] for variant, runs in results.items()]
    print(table(["variant", "round", *keys], rows))
    print()
    targets = []
    for variant in ("with noisy", "noisy, throttled"):
        if variant in results:
            p99 = median([r["p99"] for r in results[variant]])
            worst = max(r["max"] for r in results[variant])
            targets.append([f"{variant}: quiet p99", f"{p99:.0f} ms", f"<= {P99_TARGET_MS:.0f} ms",
                            "met" if p99 <= P99_TARGET_MS else "MISSED"])
            targets.append([f"{variant}: quiet max (worst round)", f"{worst:.0f} ms", f"<= {MAX_TARGET_MS:.0f} ms",
                            "met" if worst <= MAX_TARGET_MS else "MISSED"])
    if "noisy, throttled" in results:
        runs = results["noisy, throttled"]
        rates = [r["noisy/s delivered (mean)"] for r in runs]
        ok = all(THRESHOLD * 0.98 <= rate <= THRESHOLD * 1.02 for rate in rates)
        targets.append(["throttled: noisy records per second (mean over the steady seconds, each round)",
                        ", ".join(f"{rate:.0f}" for rate in rates), f"{THRESHOLD} +- 2 %", "met" if ok else "MISSED"])
        low, high = min(r["noisy/s min"] for r in runs), max(r["noisy/s max"] for r in runs)
        targets.append(["throttled: records per second of arrival (batches straddle seconds)", f"{low:.0f}-{high:.0f}",
                        "(info)", ""])
        cpu = {v: median([r["agent CPU %"] for r in results[v]]) for v in ("with noisy", "noisy, throttled")
               if v in results}
        if len(cpu) == 2:
            targets.append(["agent CPU with noisy -> throttled (median % of a core)",
                            f"{cpu['with noisy']:.0f} -> {cpu['noisy, throttled']:.0f}", "(reported)", ""])
        lost = sum(r["quiet written"] - r["quiet delivered"] for r in runs)
        targets.append(["throttled: quiet records lost", str(lost), "0", "met" if lost == 0 else "MISSED"])
    print(table(["target", "measured", "goal", ""], targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
