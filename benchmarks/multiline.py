"""Multiline: the cost of ``multiline: {mode: auto}`` on lines that contain no stack trace.

Run from the repository root::

    .venv/bin/python -m benchmarks multiline [--lines 1000000] [--runs 5]

The tree, the cluster and the pipeline are those of ``throughput`` (CRI lines
of ~120 bytes over 20 pod files, 1 % written as P+F partials, every 5th line on
stderr; enrichment from the apiserver emulator, a filter, a route, the console
sink to /dev/null), so the two figures can be read together. Per run, in this
order: a start-up run of each mode on a tiny tree, then ``mode: none``, then
``mode: auto`` (each ``logagent run --once`` with a fresh data_dir). Steady
CPU = run CPU - the same mode's start-up CPU; the ratio ``auto / none`` of steady lines per CPU-second is taken
within each run, and the median over runs is reported. Before the runs, both
modes process a small tree into files and the outputs are compared: with no
trace in the lines, ``auto`` must give the same records as ``none``.

``--traces-every N`` adds, for information, the same comparison on a second
tree where every Nth record is a 10-line Java stack trace on stderr (its
blocks take the per-line path); its output check counts one record per trace.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.agent_runs import Measured, run_enriched, work_directory
from benchmarks.common import median, table
from benchmarks.pod_tree import (
    CRI_PREFIX_BYTES,
    LINE_BYTES,
    PodSpec,
    cri_timestamp,
    message_text,
    pod_specs,
    start_cluster,
    write_pod_log,
    write_tree,
)

GOAL = 0.85

#: a real trace (java's printStackTrace), 10 lines
TRACE = [
    "java.lang.IllegalStateException: cannot load config",
    "\tat App.load(App.java:4)",
    "\tat App.handle(App.java:6)",
    "\tat App.main(App.java:9)",
    'Caused by: java.lang.NumberFormatException: For input string: "x1"',
    "\tat java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)",
    "\tat java.base/java.lang.Integer.parseInt(Integer.java:668)",
    "\tat java.base/java.lang.Integer.parseInt(Integer.java:786)",
    "\tat App.parse(App.java:2)",
    "\t... 3 more",
]


def write_trace_tree(root: Path, specs: Sequence[PodSpec], lines_per_file: int, every: int) -> int:
    """CRI files like ``write_tree``'s, with a stack trace on stderr as every ``every``th record; returns the traces."""
    width = LINE_BYTES - 1 - CRI_PREFIX_BYTES
    traces = 0
    for spec in specs:
        out: list[bytes] = []
        seq = 0
        while len(out) < lines_per_file:
            ts = cri_timestamp(seq)
            if seq % every == every - 1 and len(out) + len(TRACE) <= lines_per_file:
                out += [ts + b" stderr F " + line.encode() for line in TRACE]
                traces += 1
            else:
                out.append(ts + (b" stderr F " if seq % 5 == 0 else b" stdout F ") + message_text(seq, width))
            seq += 1
        write_pod_log(root, spec, out)
    return traces


def run_mode(workdir: Path, log_dir: Path, kubeconfig: Path, mode: str, tag: str,
             stdout_path: Path | None = None) -> Measured:
    return run_enriched(workdir, log_dir, kubeconfig, tag, source_options=f", multiline: {{mode: {mode}}}",
                        stdout_path=stdout_path)


def check_same_output(workdir: Path, log_dir: Path, kubeconfig: Path) -> str:
    outputs = {}
    for mode in ("none", "auto"):
        path = workdir / f"check-{mode}.ndjson"
        run_mode(workdir, log_dir, kubeconfig, mode, f"check-{mode}", stdout_path=path)
        outputs[mode] = sorted((r["file"], r["stream"], r["timestamp"], r["message"])
                               for r in map(json.loads, path.read_bytes().splitlines()))
    if outputs["none"] != outputs["auto"]:
        raise RuntimeError("mode auto changed the records of a tree without traces")
    return f"output check: mode auto gives the same {len(outputs['none']):,} records as mode none"


def check_trace_output(workdir: Path, log_dir: Path, kubeconfig: Path) -> str:
    """Each trace the pipeline keeps (its filter keeps half of the pods) is one record in mode auto."""
    counts, whole = {}, 0
    for mode in ("none", "auto"):
        path = workdir / f"check-traces-{mode}.ndjson"
        run_mode(workdir, log_dir, kubeconfig, mode, f"check-traces-{mode}", stdout_path=path)
        messages = [json.loads(line)["message"] for line in path.read_bytes().splitlines()]
        counts[mode] = len(messages)
        if mode == "auto":
            whole = sum(m == "\n".join(TRACE) for m in messages)
            if whole == 0 or any("\tat App" in m and m != "\n".join(TRACE) for m in messages):
                raise RuntimeError("mode auto did not make each trace one record")
    if counts["none"] - counts["auto"] != whole * (len(TRACE) - 1):
        raise RuntimeError(f"unexpected record counts {counts} for {whole} traces")
    return f"output check: {whole} traces kept by the filter, each one record in mode auto"


def measure(workdir: Path, trees: dict[str, Path], kubeconfig: Path, runs: int, total: int,
            small: Path) -> tuple[list[list[object]], dict[str, list[float]], dict[tuple[str, str], list[float]]]:
    """Interleaved runs: per run a start-up run, then none and auto on each tree."""
    rows: list[list[object]] = []
    ratios: dict[str, list[float]] = {tree: [] for tree in trees}
    steady: dict[tuple[str, str], list[float]] = {}
    for i in range(runs):
        # each mode's own start-up (auto compiles its rules), so the ratio is of the steady state
        startup = {mode: run_mode(workdir, small, kubeconfig, mode, f"startup-{mode}{i}") for mode in ("none", "auto")}
        for tree, log_dir in trees.items():
            cpu = {}
            for mode in ("none", "auto"):
                m = run_mode(workdir, log_dir, kubeconfig, mode, f"{tree}-{mode}{i}")
                cpu[mode] = max(m.cpu - startup[mode].cpu, 1e-9)
                steady.setdefault((tree, mode), []).append(total / cpu[mode])
                rows.append([i + 1, tree, mode, m.wall, m.cpu, total / cpu[mode]])
            ratios[tree].append(cpu["none"] / cpu["auto"])
            print(f"run {i + 1} {tree}: none {cpu['none']:.2f}s, auto {cpu['auto']:.2f}s steady CPU, "
                  f"ratio {ratios[tree][-1]:.3f}", file=sys.stderr)
    return rows, ratios, steady


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000, help="physical CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--traces-every", type=int, default=0,
                        help="also measure a tree with a 10-line Java trace as every Nth record (information)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)

    specs = pod_specs()
    with work_directory("logagent-bench-multiline-", args.keep) as workdir:
        trees = {"no traces": workdir / "pods"}
        write_tree(trees["no traces"], specs, args.lines // len(specs))
        write_tree(workdir / "pods-startup", specs, 5)
        write_tree(workdir / "pods-check", specs, 1000)
        if args.traces_every:
            trees["traces"] = workdir / "pods-traces"
            write_trace_tree(trees["traces"], specs, args.lines // len(specs), args.traces_every)
            write_trace_tree(workdir / "pods-check-traces", specs, 2000, args.traces_every)
        total = args.lines // len(specs) * len(specs)
        with start_cluster(workdir, specs) as emulator:
            print(check_same_output(workdir, workdir / "pods-check", emulator.kubeconfig), file=sys.stderr)
            if args.traces_every:
                print(check_trace_output(workdir, workdir / "pods-check-traces", emulator.kubeconfig),
                      file=sys.stderr)
            rows, ratios, steady = measure(workdir, trees, emulator.kubeconfig, args.runs, total,
                                           workdir / "pods-startup")
    print_tables(rows, ratios, steady, total, len(specs), args.traces_every)
    return 0


def print_tables(rows: list[list[object]], ratios: dict[str, list[float]],
                 steady: dict[tuple[str, str], list[float]], total: int, files: int, every: int) -> None:
    print(f"## Multiline: {total:,} CRI lines over {files} files; "
          "enrichment + filter + route + console to /dev/null\n")
    if every:
        print(f"Tree \"traces\": a 10-line Java trace on stderr as every {every}th record.\n")
    print(table(["run", "tree", "multiline mode", "wall s", "CPU s", "steady lines/CPU-s"], rows))
    print()
    targets = []
    for tree, values in ratios.items():
        for mode in ("none", "auto"):
            targets.append([f"{tree}: mode {mode}, steady lines/CPU-s (median)",
                            f"{median(steady[tree, mode]):,.0f}", "(info)", ""])
        ratio = median(values)
        goal, verdict = (f">= {GOAL}", "met" if ratio >= GOAL else "MISSED") if tree == "no traces" else ("(info)", "")
        targets.append([f"{tree}: auto / none, per run (median)", f"{ratio:.3f}", goal, verdict])
        spread = f"{min(values):.3f} - {max(values):.3f}"
        targets.append([f"{tree}: auto / none, range over runs", spread, "(info)", ""])
    print(table(["target", "measured", "goal", ""], targets))


if __name__ == "__main__":
    sys.exit(main())
