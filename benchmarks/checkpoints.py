"""The price of prompt checkpoints: writes per second under load, and throughput new vs old cadence.

Run from the repository root::

    .venv/bin/python -m benchmarks checkpoints [--lines 2000000] [--runs 5]

The throughput benchmark's pipeline (20 CRI files, enrichment from the
apiserver emulator, filter, route, console to /dev/null; ``logagent run
--once``, fresh data_dir per run) runs with the current checkpoint cadence
(a write within a few ms of each acknowledgement, an fsync'ed copy once a
second) and with the old one (one fsync'ed write a second, selected through
the internal environment variable of ``logagent/files/checkpoints.py``),
interleaved, ``--runs`` times each. The agent logs its checkpoint write count
at shutdown ("checkpoints saved"), with how long changes waited to reach the
file (from the first unsaved acknowledgement to the rename); writes per
second are the count over the run's wall time. Throughput is compared per run pair (new / old) and the median
ratio is reported.
"""

from __future__ import annotations

import argparse
import os
import sys

from benchmarks.agent_runs import alternated, median_ratio, run_enriched, work_directory
from benchmarks.common import checkpoints_saved, median, table, verdict
from benchmarks.pod_tree import pod_specs, start_cluster, write_tree
from logagent.files.checkpoints import CADENCE_ENV

#: per run: wall s, CPU s, checkpoint writes, fsync'ed writes, ack-to-file lag ms (mean, max)
Result = tuple[float, float, int, int, float, float]


def measure(lines: int, runs: int, cadences: dict[str, dict[str, str]]) -> dict[str, list[Result]]:
    """``runs`` runs of each cadence, alternating which goes first."""
    results: dict[str, list[Result]] = {name: [] for name in cadences}
    specs = pod_specs()
    with work_directory("logagent-ckpt-") as workdir:
        logs = workdir / "pods"
        write_tree(logs, specs, lines // len(specs))
        with start_cluster(workdir, specs) as emulator:
            for i in range(runs):
                for name in alternated(list(cadences), i):
                    tag = f"{name.split()[0]}{i}"
                    m = run_enriched(workdir, logs, emulator.kubeconfig, tag, env=cadences[name])
                    saved = checkpoints_saved(workdir / f"agent-{tag}.stderr")
                    results[name].append((m.wall, m.cpu, int(saved.get("writes", 0)), int(saved.get("syncs", 0)),
                                          float(saved.get("persist_lag_ms_mean", 0)),
                                          float(saved.get("persist_lag_ms_max", 0))))
                    print(f"run {i + 1} {name}: {m.wall:.2f}s wall, {m.cpu:.2f}s CPU, {saved.get('writes')} writes",
                          file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2_000_000, help="physical CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    base_env = {k: v for k, v in os.environ.items() if k != CADENCE_ENV}
    cadences = {"new (2 ms spacing + 1 s fsync)": base_env, "old (1 s fsync)": {**base_env, CADENCE_ENV: "legacy"}}
    results = measure(args.lines, args.runs, cadences)
    total = args.lines // len(pod_specs()) * len(pod_specs())
    names = list(cadences)
    rows = []
    for name in names:
        runs = results[name]
        rows.append([name, total / median([r[0] for r in runs]), total / median([r[1] for r in runs]),
                     median([r[2] for r in runs]), median([r[2] / r[0] for r in runs]), median([r[3] for r in runs]),
                     f"{median([r[4] for r in runs]):.1f} / {max(r[5] for r in runs):.1f}"])
    print(f"## Checkpoint cadence under load: {total:,} lines, `logagent run --once`, medians of {args.runs} runs\n")
    print(table(["cadence", "lines/s (wall)", "lines/CPU-s", "checkpoint writes", "writes/s", "fsync'ed writes",
                 "ack-to-file ms (mean / max)"], rows))
    new, old = results[names[0]], results[names[1]]
    wall_ratio = median_ratio([o[0] for o in old], [n[0] for n in new])
    cpu_ratio = median_ratio([o[1] for o in old], [n[1] for n in new])
    print()
    print(table(["new / old (median of per-run ratios)", "measured", "goal", ""], [
        ["throughput, wall", f"{wall_ratio:.3f}", ">= 0.97", verdict(wall_ratio >= 0.97)],
        ["throughput, per CPU-s", f"{cpu_ratio:.3f}", ">= 0.97", verdict(cpu_ratio >= 0.97)],
    ]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
