"""multiline in instructions: ``mode: auto`` against ``none`` counted by valgrind's callgrind, deterministic under load.

Run from the repository root::

    .venv/bin/python -m benchmarks.multiline_instructions [--lines 400000] [--trace-share 0.05]

The trees of ``benchmarks/multiline.py`` (ordinary container logs; the same
with ``--trace-share`` of the lines in real traces), metadata from an offline
snapshot (no emulator process), the throughput pipeline, each mode a
``logagent run --once`` under ``valgrind --tool=callgrind`` with
``PYTHONHASHSEED=0``: instructions per line are the difference between a run
on ``--lines`` lines and one on 5 lines per file, over the difference of
lines. The ratio none / auto is what lines per CPU-second would show on an
otherwise idle machine (instructions are not cycles: cache misses are not
counted), but it does not move with the load of a shared machine. Work done
once per process is in both runs and cancels out: ``auto`` compiles every
regex its steps can need when the machine is built (at configuration), so
the big run holds no one-time compile (before, about 130 million
instructions of regexes compiled on the first traces were counted in it).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.agent_runs import PIPELINE, agent_config, callgrind_instructions, snapshot_kubernetes
from benchmarks.common import REPO, machine_line, table
from benchmarks.multiline import GOALS
from benchmarks.multiline_logs import write_log_tree
from benchmarks.pod_tree import pod_specs, write_snapshot

def instructions(workdir: Path, log_dir: Path, snapshot: Path, mode: str, tag: str) -> int:
    """Instructions of one ``logagent run --once`` (every thread) on ``log_dir`` with ``multiline: {mode}``."""
    data_dir = workdir / f"data-{tag}"
    shutil.rmtree(data_dir, ignore_errors=True)
    config = agent_config(workdir / f"agent-{tag}.yaml", log_dir=log_dir, data_dir=data_dir,
                          kubernetes=snapshot_kubernetes(snapshot), pipeline=PIPELINE,
                          source_options=f", multiline: {{mode: {mode}}}")
    return callgrind_instructions(config, workdir / f"callgrind-{tag}.log", tag)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=400_000, help="physical CRI lines per tree (over 20 files)")
    parser.add_argument("--trace-share", type=float, default=0.05, help="share of the lines of 'traces' in traces")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="logagent-bench-multiline-ir-"))
    specs = pod_specs()
    per_file = args.lines // len(specs)
    lines = per_file * len(specs) - 5 * len(specs)
    rows = []
    try:
        snapshot = write_snapshot(workdir / "snapshot.json", specs)
        small = workdir / "small"
        write_log_tree(small, specs, 5, 0.0)
        trees = {"no traces": (workdir / "plain", 0.0), "traces": (workdir / "traces", args.trace_share)}
        base = {mode: instructions(workdir, small, snapshot, mode, f"small-{mode}") for mode in ("none", "auto")}
        for (tree, (log_dir, share)), goal in zip(trees.items(), GOALS.values()):
            write_log_tree(log_dir, specs, per_file, share)
            ir = {mode: (instructions(workdir, log_dir, snapshot, mode, f"{tree}-{mode}".replace(" ", "-"))
                         - base[mode]) / lines for mode in ("none", "auto")}
            rows.append([tree, f"{ir['none']:,.0f}", f"{ir['auto']:,.0f}", f"{ir['none'] / ir['auto']:.3f}",
                         f">= {goal}"])
            print(" | ".join(rows[-1]), file=sys.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"## multiline in instructions: {args.lines:,} CRI lines per tree, traces {args.trace_share:.0%} of "
          f"'traces'; callgrind ({machine_line()})\n")
    print(table(["tree", "none Ir/line", "auto Ir/line", "none / auto", "goal"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
