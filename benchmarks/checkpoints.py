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
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.throughput import median, pod_specs, run_agent, start_cluster, table, write_tree
from logagent.files.checkpoints import CADENCE_ENV


def _saved(stderr: Path) -> dict:
    for line in stderr.read_text(errors="replace").splitlines():
        if '"checkpoints saved"' in line:
            return json.loads(line)
    return {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2_000_000, help="physical CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="logagent-ckpt-"))
    specs = pod_specs()
    emulator = None
    base_env = {k: v for k, v in os.environ.items() if k != CADENCE_ENV}
    cadences = {"new (2 ms spacing + 1 s fsync)": base_env, "old (1 s fsync)": {**base_env, CADENCE_ENV: "legacy"}}
    results: dict[str, list[tuple[float, float, int, int, float, float]]] = {name: [] for name in cadences}
    try:
        logs = workdir / "pods"
        write_tree(logs, specs, args.lines // len(specs))
        total = args.lines // len(specs) * len(specs)
        emulator = start_cluster(workdir, specs)
        for i in range(args.runs):
            order = list(cadences.items()) if i % 2 == 0 else list(cadences.items())[::-1]
            for name, env in order:
                tag = f"{'new' if env is base_env else 'old'}{i}"
                m = run_agent(workdir, logs, emulator.kubeconfig, tag, env=env)
                saved = _saved(workdir / f"agent-{tag}.stderr")
                results[name].append((m.wall, m.cpu, int(saved.get("writes", 0)), int(saved.get("syncs", 0)),
                                      float(saved.get("persist_lag_ms_mean", 0)),
                                      float(saved.get("persist_lag_ms_max", 0))))
                print(f"run {i + 1} {name}: {m.wall:.2f}s wall, {m.cpu:.2f}s CPU, {saved.get('writes')} writes",
                      file=sys.stderr)
    finally:
        if emulator is not None:
            emulator.stop()
        shutil.rmtree(workdir, ignore_errors=True)
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
    wall_ratio = median([o[0] / n[0] for n, o in zip(new, old)])
    cpu_ratio = median([o[1] / n[1] for n, o in zip(new, old)])
    print()
    print(table(["new / old (median of per-run ratios)", "measured", "goal", ""], [
        ["throughput, wall", f"{wall_ratio:.3f}", ">= 0.97", "met" if wall_ratio >= 0.97 else "MISSED"],
        ["throughput, per CPU-s", f"{cpu_ratio:.3f}", ">= 0.97", "met" if cpu_ratio >= 0.97 else "MISSED"],
    ]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
