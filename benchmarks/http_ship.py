"""Shipping to HTTP: lines per agent CPU-second, none / gzip / zstd, beside the console sink.

Run from the repository root::

    .venv/bin/python -m benchmarks http [--lines 400000] [--runs 3] [--profile DIR]

The same CRI tree as ``throughput.py`` (20 pod files, enrichment from an
offline snapshot of the same pods, no filter) is shipped by ``logagent run
--once`` four ways, interleaved in every run: to the console sink writing to
/dev/null, and to ``tests.receiver`` (its own process, on 127.0.0.1) with the
http sink as ndjson, uncompressed, gzip and zstd (default levels). ``--once``
returns after every record was acknowledged (a 2xx), and the receiver's own
count is checked against the number of records. Reported per sink (medians of
``--runs``): lines per agent CPU-second (utime+stime of the agent process,
all threads, start-up included and, "steady", with the start-up of a tiny
tree subtracted), wall records/s, bytes per line on the wire (the receiver's
count of request body bytes as sent), and the agent's peak RSS; the ratios to
the console sink of the same run are the figures to quote. ``--profile DIR``
runs each http variant once more under py-spy (``--subprocesses``, raw
collapsed stacks into DIR).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.agent_runs import Measured, run_once, snapshot_kubernetes
from benchmarks.common import median, table
from benchmarks.pod_tree import pod_specs, write_snapshot, write_tree
from benchmarks.receivers import ReceiverProcess

HTTP = "sinks:\n  out: {{type: http, inputs: [pods], uri: '{uri}', encoding: ndjson, compression: %s}}\n"
SINKS = {
    "console (/dev/null)": "sinks:\n  out: {{type: console, inputs: [pods]}}\n",
    "http none": HTTP % "none",
    "http gzip": HTTP % "gzip",
    "http zstd": HTTP % "zstd",
}


def run_one(workdir: Path, log_dir: Path, snapshot: Path, pipeline: str, tag: str,
            profile: Path | None = None) -> Measured:
    return run_once(workdir, log_dir, tag, kubernetes=snapshot_kubernetes(snapshot), pipeline=pipeline,
                    profile=(profile, 500, ("--threads",)) if profile else None)


def build_inputs(workdir: Path, lines: int) -> tuple[Path, Path, Path, int]:
    """The pods tree, a tiny tree for start-up, the offline snapshot; and the record count."""
    specs = pod_specs()
    tree, small = workdir / "pods", workdir / "pods-startup"
    records = sum(write_tree(tree, specs, lines // len(specs)).values())
    write_tree(small, specs, 5)
    return tree, small, write_snapshot(workdir / "cluster.json", specs), records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="also record py-spy profiles of the http variants here")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="logagent-http-"))
    receiver = None
    try:
        tree, small, snapshot, records = build_inputs(workdir, args.lines)
        receiver = ReceiverProcess(workdir)
        results: dict[str, list[Measured]] = {name: [] for name in SINKS}
        wire: dict[str, list[int]] = {name: [] for name in SINKS}
        startup: list[Measured] = []
        expected = 0
        for i in range(args.runs):
            startup.append(run_one(workdir, small, snapshot, SINKS["console (/dev/null)"].format(), f"s{i}"))
            for name, template in SINKS.items():
                before = receiver.bytes()
                results[name].append(run_one(workdir, tree, snapshot, template.format(uri=receiver.uri),
                                             f"{i}-{list(SINKS).index(name)}"))
                if name.startswith("http"):
                    expected += records
                    seen = receiver.wait_for(expected)
                    if seen != expected:
                        raise RuntimeError(f"receiver counted {seen} records, expected {expected}")
                    time.sleep(0.3)  # the byte count is printed with the record count
                    wire[name].append(receiver.bytes() - before)
                m = results[name][-1]
                print(f"run {i + 1} {name}: {m.wall:.2f}s wall {m.cpu:.2f}s cpu {m.peak_rss_kib} KiB", file=sys.stderr)
        if args.profile is not None:
            args.profile.mkdir(parents=True, exist_ok=True)
            for name, template in SINKS.items():
                out = args.profile / (name.split()[-1].strip("()/").replace("/", "_") + ".txt")
                run_one(workdir, tree, snapshot, template.format(uri=receiver.uri), f"p-{out.stem}", profile=out)
                expected += records if name.startswith("http") else 0
                receiver.wait_for(expected)
    finally:
        if receiver is not None:
            receiver.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(report(results, wire, startup, records, args.runs))
    return 0


def report(results: dict[str, list[Measured]], wire: dict[str, list[int]], startup: list[Measured],
           records: int, runs: int) -> str:
    wall_s, cpu_s = median([m.wall for m in startup]), median([m.cpu for m in startup])
    rows = []
    base: tuple[float, float] | None = None
    for name, ms in results.items():
        wall, cpu = median([m.wall for m in ms]), median([m.cpu for m in ms])
        per_cpu, steady = records / cpu, records / max(cpu - cpu_s, 1e-9)
        base = base or (per_cpu, steady)
        wire_bytes = f"{median(wire[name]) / records:.1f}" if wire[name] else "-"
        rows.append([name, per_cpu, f"{per_cpu / base[0]:.2f}", steady, f"{steady / base[1]:.2f}",
                     records / wall, wire_bytes, round(median([m.peak_rss_kib for m in ms]) / 1024)])
    head = (f"## HTTP shipping: {records:,} records (20 files, enriched, no filter); medians of {runs} runs\n\n")
    body = table(["sink", "lines/CPU-s", "vs console", "lines/CPU-s (steady)", "steady vs console",
                  "wall records/s", "bytes/line on the wire", "peak RSS MiB"], rows)
    return (head + body + f"\n\nagent start-up (subtracted for 'steady'): {wall_s:.2f} s wall, {cpu_s:.2f} s CPU; "
            "every record counted by the receiver")


if __name__ == "__main__":
    sys.exit(main())
