"""Multiline: the cost of ``multiline: {mode: auto}`` on ordinary container logs, and on logs with traces.

Run from the repository root::

    .venv/bin/python -m benchmarks multiline [--lines 1000000] [--runs 5] [--trace-share 0.05]

The lines (``benchmarks/multiline_logs.py``) are ordinary container logs:
nginx/Apache access lines, JSON, logfmt, klog, logback lines with levels,
lines with ``Error:`` or ``Exception`` mid-sentence, indented YAML and pretty
JSON dumps, over 20 pod files; the tree "traces" mixes in the real traces of
``tests/fixtures/traces/real`` (Java, Python, Go, Ruby, JavaScript, PHP, .NET,
Dart, Rust) as ``--trace-share`` of its lines, on stderr. The cluster and the
pipeline are those of ``throughput`` (enrichment from the apiserver emulator,
a filter, a route, the console sink to /dev/null). Per run, in this order: a
start-up run of each mode on a tiny tree, then on each tree ``mode: none`` and
``mode: auto`` (each ``logagent run --once`` with a fresh data_dir). Steady
CPU = run CPU - the median of the same mode's start-up runs (all runs': one
start-up run varies by more than what ``auto`` costs on a million lines, the
machine's build among it); the ratio ``auto / none`` of steady lines per
CPU-second is taken within each run, and the median over runs is reported.

Before the runs, two checks through the agent (console sink, every pod):
100,000 ordinary lines in ``auto`` must give no record joined from several
lines (false joins: 0), and on the trees with traces every trace must come out
as exactly one record.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.agent_runs import CONSOLE, Measured, run_enriched, work_directory
from benchmarks.common import median, table
from benchmarks.multiline_logs import real_traces, write_log_tree
from benchmarks.pod_tree import pod_specs, start_cluster, write_tree

#: auto / none, steady lines per CPU-second: without traces, with ``--trace-share`` of the lines in traces
GOALS = {"no traces": 0.95, "traces": 0.9}
CHECK_LINES = 100_000


def run_mode(workdir: Path, log_dir: Path, kubeconfig: Path, mode: str, tag: str,
             stdout_path: Path | None = None, pipeline: str | None = None) -> Measured:
    options = f", multiline: {{mode: {mode}}}"
    if pipeline is None:
        return run_enriched(workdir, log_dir, kubeconfig, tag, source_options=options, stdout_path=stdout_path)
    return run_enriched(workdir, log_dir, kubeconfig, tag, source_options=options, stdout_path=stdout_path,
                        pipeline=pipeline)


def check_no_false_joins(workdir: Path, log_dir: Path, kubeconfig: Path, lines: int) -> str:
    path = workdir / "check-ordinary.ndjson"
    run_mode(workdir, log_dir, kubeconfig, "auto", "check-ordinary", stdout_path=path, pipeline=CONSOLE)
    messages = [json.loads(line)["message"] for line in path.read_bytes().splitlines()]
    joined = sum("\n" in m for m in messages)
    if joined or len(messages) != lines:
        raise RuntimeError(f"false joins: {joined} records of several lines, {len(messages)} records of {lines} lines")
    return f"false joins: 0 records joined from several lines in {lines:,} ordinary lines (mode auto)"


def check_traces_whole(workdir: Path, log_dir: Path, kubeconfig: Path, written: int) -> str:
    path = workdir / "check-traces.ndjson"
    run_mode(workdir, log_dir, kubeconfig, "auto", "check-traces", stdout_path=path, pipeline=CONSOLE)
    texts = {"\n".join(lines) for lines in real_traces()}
    messages = [json.loads(line)["message"] for line in path.read_bytes().splitlines()]
    whole = sum(m in texts for m in messages)
    joined = sum("\n" in m for m in messages)
    if whole != written or joined != whole:
        raise RuntimeError(f"{written} traces written, {whole} came out whole, {joined} records of several lines")
    return f"traces: all {written} traces written came out as exactly one record each (mode auto)"


def measure(workdir: Path, trees: dict[str, Path], kubeconfig: Path, runs: int, total: int,
            small: Path) -> tuple[list[list[object]], dict[str, list[float]], dict[tuple[str, str], list[float]]]:
    """Interleaved runs: per run a start-up run, then none and auto on each tree."""
    rows: list[list[object]] = []
    ratios: dict[str, list[float]] = {tree: [] for tree in trees}
    steady: dict[tuple[str, str], list[float]] = {}
    startups: dict[str, list[float]] = {"none": [], "auto": []}
    measured: list[tuple[int, str, str, Measured]] = []
    for i in range(runs):
        # each mode's own start-up (auto compiles its rules), so the ratio is of the steady state
        for mode in ("none", "auto"):
            startups[mode].append(run_mode(workdir, small, kubeconfig, mode, f"startup-{mode}{i}").cpu)
        measured += [(i, tree, mode, run_mode(workdir, log_dir, kubeconfig, mode, f"{tree}-{mode}{i}"))
                     for tree, log_dir in trees.items() for mode in ("none", "auto")]
    startup = {mode: median(values) for mode, values in startups.items()}
    print("start-up CPU s (median, range): " + ", ".join(
        f"{mode} {startup[mode]:.2f} ({min(values):.2f}-{max(values):.2f})" for mode, values in startups.items()),
        file=sys.stderr)
    cpu: dict[tuple[int, str, str], float] = {}
    for i, tree, mode, m in measured:
        cpu[i, tree, mode] = max(m.cpu - startup[mode], 1e-9)
        steady.setdefault((tree, mode), []).append(total / cpu[i, tree, mode])
        rows.append([i + 1, tree, mode, m.wall, m.cpu, total / cpu[i, tree, mode]])
    for i in range(runs):
        for tree in trees:
            ratios[tree].append(cpu[i, tree, "none"] / cpu[i, tree, "auto"])
            print(f"run {i + 1} {tree}: none {cpu[i, tree, 'none']:.2f}s, auto {cpu[i, tree, 'auto']:.2f}s "
                  f"steady CPU, ratio {ratios[tree][-1]:.3f}", file=sys.stderr)
    return rows, ratios, steady


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000, help="physical CRI lines per tree (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--trace-share", type=float, default=0.05,
                        help="share of the lines of the tree 'traces' that are in stack traces (0: no such tree)")
    parser.add_argument("--plain-tree", action="store_true",
                        help="the no-trace tree is throughput's (logfmt lines of one shape, none indented) instead")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)

    specs = pod_specs()
    per_file = args.lines // len(specs)
    with work_directory("logagent-bench-multiline-", args.keep) as workdir:
        trees = {"no traces": workdir / "pods"}
        if args.plain_tree:
            write_tree(trees["no traces"], specs, per_file)
        else:
            write_log_tree(trees["no traces"], specs, per_file, 0.0)
        write_log_tree(workdir / "pods-startup", specs, 5, 0.0)
        write_log_tree(workdir / "pods-check", specs, CHECK_LINES // len(specs), 0.0)
        if args.trace_share:
            trees["traces"] = workdir / "pods-traces"
            write_log_tree(trees["traces"], specs, per_file, args.trace_share)
            checked = write_log_tree(workdir / "pods-check-traces", specs, 2000, args.trace_share)
        total = per_file * len(specs)
        with start_cluster(workdir, specs) as emulator:
            print(check_no_false_joins(workdir, workdir / "pods-check", emulator.kubeconfig,
                                       CHECK_LINES // len(specs) * len(specs)), file=sys.stderr)
            if args.trace_share:
                print(check_traces_whole(workdir, workdir / "pods-check-traces", emulator.kubeconfig, checked),
                      file=sys.stderr)
            rows, ratios, steady = measure(workdir, trees, emulator.kubeconfig, args.runs, total,
                                           workdir / "pods-startup")
    print_tables(rows, ratios, steady, total, len(specs), args.trace_share)
    return 0


def print_tables(rows: list[list[object]], ratios: dict[str, list[float]],
                 steady: dict[tuple[str, str], list[float]], total: int, files: int, share: float) -> None:
    print(f"## Multiline: {total:,} CRI lines over {files} files; "
          "enrichment + filter + route + console to /dev/null\n")
    if share:
        print(f"Tree \"traces\": real traces (9 languages) as {share:.0%} of the lines, on stderr.\n")
    print(table(["run", "tree", "multiline mode", "wall s", "CPU s", "steady lines/CPU-s"], rows))
    print()
    targets = []
    for tree, values in ratios.items():
        for mode in ("none", "auto"):
            targets.append([f"{tree}: mode {mode}, steady lines/CPU-s (median)",
                            f"{median(steady[tree, mode]):,.0f}", "(info)", ""])
        ratio = median(values)
        goal, verdict = f">= {GOALS[tree]}", "met" if ratio >= GOALS[tree] else "MISSED"
        targets.append([f"{tree}: auto / none, per run (median)", f"{ratio:.3f}", goal, verdict])
        spread = f"{min(values):.3f} - {max(values):.3f}"
        targets.append([f"{tree}: auto / none, range over runs", spread, "(info)", ""])
    print(table(["target", "measured", "goal", ""], targets))


if __name__ == "__main__":
    sys.exit(main())
