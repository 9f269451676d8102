"""remap in instructions: the remap benchmark's pipelines counted by valgrind's callgrind, deterministic under load.

Run from the repository root::

    .venv/bin/python -m benchmarks remap_instructions [--lines 20000] [--only context,merge,deepflow]
        [--before-ref REF]

The trees and programs of ``benchmarks/remap.py``, metadata from an offline
snapshot (no emulator process), each pipeline (``pods -> [remap] -> console``
and ``pods -> console``) a ``logagent run --once`` under
``valgrind --tool=callgrind``: instructions per line are the difference
between a run on ``--lines`` lines and one on 5 lines per file, over the
difference of lines. The ratio without / with is what lines per CPU-second
would show on an otherwise idle machine (instructions are not cycles: cache
misses and the GIL hand-over to the console writer are not counted), but it
does not move with the load of a shared machine. ``--before-ref`` adds the
program on the package at REF.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.agent_runs import agent_config, callgrind_instructions, snapshot_kubernetes
from benchmarks.common import REPO, machine_line, table
from benchmarks.pod_tree import pod_specs, write_snapshot
from benchmarks.remap import PROGRAMS, extract, pipeline, write_tree


def instructions(workdir: Path, log_dir: Path, snapshot: Path, tag: str, program: str | None, code: Path) -> int:
    """Instructions of one ``logagent run --once`` (every thread) on ``log_dir``."""
    data_dir = workdir / f"data-{tag}"
    shutil.rmtree(data_dir, ignore_errors=True)
    config = agent_config(workdir / f"agent-{tag}.yaml", log_dir=log_dir, data_dir=data_dir,
                          kubernetes=snapshot_kubernetes(snapshot), pipeline=pipeline(program))
    return callgrind_instructions(config, workdir / f"callgrind-{tag}.log", tag, cwd=code)


def per_line(workdir: Path, trees: tuple[Path, Path], lines: tuple[int, int], snapshot: Path, tag: str,
             program: str | None, code: Path) -> float:
    big = instructions(workdir, trees[0], snapshot, f"{tag}-big", program, code)
    small = instructions(workdir, trees[1], snapshot, f"{tag}-small", program, code)
    return (big - small) / (lines[0] - lines[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=20_000, help="CRI lines per program (over 20 files)")
    parser.add_argument("--only", default=",".join(PROGRAMS), help="comma-separated programs to run")
    parser.add_argument("--before-ref", help="git ref whose remap is also counted")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="logagent-bench-remap-ir-"))
    specs = pod_specs()
    rows = []
    try:
        snapshot = write_snapshot(workdir / "snapshot.json", specs)
        before = None
        if args.before_ref:
            before = workdir / "before"
            extract(args.before_ref, before)
        per_file = args.lines // len(specs)
        lines = (per_file * len(specs), 5 * len(specs))
        for name in [name for name in args.only.split(",") if name]:
            program, kind, goal = PROGRAMS[name]
            trees = (workdir / f"{name}-pods", workdir / f"{name}-small")
            write_tree(trees[0], specs, per_file, kind)
            write_tree(trees[1], specs, 5, kind)
            without = per_line(workdir, trees, lines, snapshot, f"{name}-without", None, REPO)
            with_ = per_line(workdir, trees, lines, snapshot, f"{name}-with", program, REPO)
            row = [name, f"{without:,.0f}", f"{with_:,.0f}", f"{without / with_:.2f}", f">= {goal}"]
            if before is not None:
                old = per_line(workdir, trees, lines, snapshot, f"{name}-before", program, before)
                row += [f"{old:,.0f}", f"{without / old:.2f}"]
            rows.append(row)
            print(" | ".join(row), file=sys.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    headers = ["program", "without Ir/line", "with Ir/line", "without / with", "goal"]
    if args.before_ref:
        headers += [f"before ({args.before_ref}) Ir/line", "without / before"]
    print(f"## remap in instructions: {args.lines:,} CRI lines per program; callgrind ({machine_line()})\n")
    print(table(headers, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
