"""Throughput: CRI files -> enrichment (apiserver emulator) -> filter -> route -> console (/dev/null).

Run from the repository root::

    .venv/bin/python -m benchmarks.throughput [--lines 2000000] [--runs 3] [--profile out.txt]

Each run starts a fresh agent (``logagent run --once``, fresh data_dir) on the
same files and measures its wall time and CPU time (utime+stime of the child,
from ``os.wait4``). Agent start-up (imports, the metadata sync that ``--once``
waits for) is measured by a run on a tiny tree of the same shape (20 files, a
few lines each) and subtracted to give the steady-state rate. The baseline,
``benchmarks/baseline_loop.py`` (a minimal Python read/split/msgspec-encode
loop), runs on the same files in the same run. Results are medians of
``--runs`` runs, printed as markdown tables.

The tree and the cluster are in ``pod_tree.py``, the measured runs in
``agent_runs.py`` (shared with the other pipeline benchmarks).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.agent_runs import Measured, median_ratio, run_enriched, run_measured, work_directory
from benchmarks.common import PYTHON, REPO, median, table
from benchmarks.pod_tree import PodSpec, pod_specs, start_cluster, write_tree


def run_baseline(log_dir: Path) -> Measured:
    result = run_measured([PYTHON, str(REPO / "benchmarks" / "baseline_loop.py"), str(log_dir)],
                          stdout=subprocess.DEVNULL)
    if result.returncode != 0:
        raise RuntimeError(f"baseline loop exited {result.returncode}")
    return result


def check_output(workdir: Path, log_dir: Path, kubeconfig: Path, specs: Sequence[PodSpec],
                 records: dict[str, int]) -> str:
    """One small run into a file: every kept record is there once and enriched."""
    out = workdir / "check.ndjson"
    run_enriched(workdir, log_dir, kubeconfig, "check", stdout_path=out)
    got = [json.loads(line) for line in out.read_bytes().splitlines()]
    expected = sum(records[s.dir_name] for s in specs if s.frontend)
    problems = []
    if len(got) != expected:
        problems.append(f"{len(got)} records, expected {expected}")
    if any(r["kubernetes"]["pod_labels"]["tier"] != "frontend" for r in got):
        problems.append("a backend record passed the filter")
    if any("namespace_labels" not in r["kubernetes"] or "node_labels" not in r["kubernetes"] for r in got):
        problems.append("a record without namespace/node labels")
    if problems:
        raise RuntimeError("output check failed: " + "; ".join(problems))
    return f"output check: {len(got):,} records of {sum(records.values()):,} (filter keeps the frontend half), all enriched"


def measure(workdir: Path, big: Path, small: Path, kubeconfig: Path, runs: int, other_code: Path | None,
            ) -> tuple[list[list[object]], dict[str, list[Measured]]]:
    """Interleaved runs, so drift of the machine's speed hits all alike: start-up, agent, baseline (, other)."""
    rows: list[list[object]] = []
    results: dict[str, list[Measured]] = {"agent": [], "startup": [], "baseline": [], "other": []}
    for i in range(runs):
        results["startup"].append(run_enriched(workdir, small, kubeconfig, f"startup{i}"))
        results["agent"].append(run_enriched(workdir, big, kubeconfig, f"run{i}"))
        results["baseline"].append(run_baseline(big))
        if other_code:
            results["other"].append(run_enriched(workdir, big, kubeconfig, f"other{i}", code=other_code))
            rows.append([i + 1, f"agent of {other_code}", results["other"][-1].wall, results["other"][-1].cpu])
        for name, key in (("agent start-up", "startup"), ("agent", "agent"), ("baseline loop", "baseline")):
            rows.append([i + 1, name, results[key][-1].wall, results[key][-1].cpu])
        print(f"run {i + 1}: agent {results['agent'][-1].wall:.2f}s wall {results['agent'][-1].cpu:.2f}s cpu, "
              f"baseline {results['baseline'][-1].wall:.2f}s", file=sys.stderr)
    return rows, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2_000_000, help="physical CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="also record one agent run with py-spy (raw/collapsed stacks)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--compare-with", type=Path, metavar="CHECKOUT",
                        help="also run the agent of another checkout (e.g. the commit before a change), interleaved")
    args = parser.parse_args(argv)

    specs = pod_specs()
    with work_directory("logagent-bench-", args.keep) as workdir:
        big, small = workdir / "pods", workdir / "pods-startup"
        write_tree(big, specs, args.lines // len(specs))
        write_tree(small, specs, 5)
        check_dir = workdir / "pods-check"
        check_records = write_tree(check_dir, specs, 1000)
        total_lines = args.lines // len(specs) * len(specs)
        raw_bytes = sum(p.stat().st_size for p in big.rglob("*.log"))
        with start_cluster(workdir, specs) as emulator:
            print(check_output(workdir, check_dir, emulator.kubeconfig, specs, check_records), file=sys.stderr)
            rows, results = measure(workdir, big, small, emulator.kubeconfig, args.runs, args.compare_with)
            if args.profile:
                run_enriched(workdir, big, emulator.kubeconfig, "profile", profile=(args.profile, 250, ()))
                print(f"profile written to {args.profile}", file=sys.stderr)

    print(f"## Throughput: {total_lines:,} CRI lines ({raw_bytes / 1e6:.0f} MB) over {len(specs)} files; "
          f"enrichment + filter + route + console to /dev/null\n")
    print(table(["run", "process", "wall s", "CPU s"], rows))
    print()
    print(report(results, total_lines, args.runs, args.compare_with))
    return 0


def report(results: dict[str, list[Measured]], total_lines: int, runs: int, other_code: Path | None) -> str:
    agent, startup, baseline, other = results["agent"], results["startup"], results["baseline"], results["other"]
    wall_a, cpu_a = median([m.wall for m in agent]), median([m.cpu for m in agent])
    wall_s, cpu_s = median([m.wall for m in startup]), median([m.cpu for m in startup])
    wall_b, cpu_b = median([m.wall for m in baseline]), median([m.cpu for m in baseline])
    steady_wall, steady_cpu = max(wall_a - wall_s, 1e-9), max(cpu_a - cpu_s, 1e-9)
    summary = [
        ["agent, total (incl. start-up)", total_lines / wall_a, total_lines / cpu_a],
        ["agent, steady state (start-up run subtracted)", total_lines / steady_wall, total_lines / steady_cpu],
        ["baseline loop (read + split + msgspec encode)", total_lines / wall_b, total_lines / cpu_b],
    ]
    out = [table(["medians of %d runs" % runs, "lines/s (wall)", "lines/CPU-s"], summary), ""]
    ratio = (total_lines / steady_cpu) / (total_lines / cpu_b)
    ratio_wall = (total_lines / steady_wall) / (total_lines / wall_b)
    per_cpu = total_lines / steady_cpu
    per_run = [b.cpu / max(a.cpu - s.cpu, 1e-9) for a, s, b in zip(agent, startup, baseline)]
    targets = [
        ["steady lines per CPU-second", f"{per_cpu:,.0f}", ">= 500,000", "met" if per_cpu >= 500_000 else "MISSED"],
        ["steady / baseline (per CPU-s)", f"{ratio:.2f}", ">= 0.8", "met" if ratio >= 0.8 else "MISSED"],
        ["steady / baseline per CPU-s, median of per-run ratios", f"{median(per_run):.2f}",
         "(info)", " ".join(f"{r:.2f}" for r in per_run)],
        ["steady / baseline (wall)", f"{ratio_wall:.2f}", "(info)", ""],
        ["agent start-up (wall / CPU s)", f"{wall_s:.2f} / {cpu_s:.2f}", "(info)", ""],
    ]
    out.append(table(["target", "measured", "goal", ""], targets))
    if other:
        out += ["", table([f"this checkout / {other_code} (median of per-run ratios)", "throughput ratio"], [
            ["wall", f"{median_ratio([o.wall for o in other], [a.wall for a in agent]):.3f}"],
            ["CPU", f"{median_ratio([o.cpu for o in other], [a.cpu for a in agent]):.3f}"],
        ])]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
