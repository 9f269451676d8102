"""Multiline: the cost of ``multiline: {mode: auto}`` on lines that contain no stack trace.

Run from the repository root::

    .venv/bin/python -m benchmarks multiline [--lines 1000000] [--runs 5]

The tree, the cluster and the pipeline are those of ``throughput`` (CRI lines
of ~120 bytes over 20 pod files, 1 % written as P+F partials, every 5th line on
stderr; enrichment from the apiserver emulator, a filter, a route, the console
sink to /dev/null), so the two figures can be read together. Per run, in this
order: a start-up run on a tiny tree, then ``mode: none``, then ``mode: auto``
(each ``logagent run --once`` with a fresh data_dir). Steady CPU = run CPU -
start-up CPU; the ratio ``auto / none`` of steady lines per CPU-second is taken
within each run, and the median over runs is reported. Before the runs, both
modes process a small tree into files and the outputs are compared: with no
trace in the lines, ``auto`` must give the same records as ``none``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.throughput import (
    NODE,
    PIPELINE,
    Measured,
    agent_args,
    median,
    pod_specs,
    run_measured,
    start_cluster,
    table,
    write_tree,
)

GOAL = 0.85


def run_mode(workdir: Path, log_dir: Path, kubeconfig: Path, mode: str, tag: str,
             stdout_path: Path | None = None) -> Measured:
    data_dir = workdir / f"data-{tag}"
    shutil.rmtree(data_dir, ignore_errors=True)
    config = workdir / f"agent-{tag}.yaml"
    config.write_text(
        f"data_dir: {data_dir}\n"
        "api: {enabled: false}\n"
        f"kubernetes: {{node_name: {NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0}}\n"
        "sources:\n"
        f"  pods: {{type: kubernetes_logs, log_dir: {log_dir}, multiline: {{mode: {mode}}}}}\n"
        f"{PIPELINE}"
    )
    out = open(stdout_path or "/dev/null", "wb")
    try:
        result = run_measured(agent_args(config), stdout=out.fileno(), stderr_path=workdir / f"agent-{tag}.stderr")
    finally:
        out.close()
    if result.returncode != 0:
        tail = (workdir / f"agent-{tag}.stderr").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"agent run {tag} exited {result.returncode}:\n{tail}")
    return result


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000, help="physical CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="logagent-bench-multiline-"))
    specs = pod_specs()
    emulator = None
    rows: list[list[object]] = []
    ratios: list[float] = []
    steady: dict[str, list[float]] = {"none": [], "auto": []}
    try:
        big, small, check = workdir / "pods", workdir / "pods-startup", workdir / "pods-check"
        write_tree(big, specs, args.lines // len(specs))
        write_tree(small, specs, 5)
        write_tree(check, specs, 1000)
        total = args.lines // len(specs) * len(specs)
        emulator = start_cluster(workdir, specs)
        print(check_same_output(workdir, check, emulator.kubeconfig), file=sys.stderr)
        for i in range(args.runs):
            startup = run_mode(workdir, small, emulator.kubeconfig, "none", f"startup{i}")
            cpu = {}
            for mode in ("none", "auto"):
                m = run_mode(workdir, big, emulator.kubeconfig, mode, f"{mode}{i}")
                cpu[mode] = max(m.cpu - startup.cpu, 1e-9)
                steady[mode].append(total / cpu[mode])
                rows.append([i + 1, mode, m.wall, m.cpu, total / cpu[mode]])
            ratios.append(cpu["none"] / cpu["auto"])
            print(f"run {i + 1}: none {cpu['none']:.2f}s, auto {cpu['auto']:.2f}s steady CPU, "
                  f"ratio {ratios[-1]:.3f}", file=sys.stderr)
    finally:
        if emulator is not None:
            emulator.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"work directory kept: {workdir}", file=sys.stderr)

    print(f"## Multiline: {total:,} CRI lines without traces over {len(specs)} files; "
          "enrichment + filter + route + console to /dev/null\n")
    print(table(["run", "multiline mode", "wall s", "CPU s", "steady lines/CPU-s"], rows))
    print()
    ratio = median(ratios)
    print(table(["target", "measured", "goal", ""], [
        ["mode none, steady lines/CPU-s (median)", f"{median(steady['none']):,.0f}", "(info)", ""],
        ["mode auto, steady lines/CPU-s (median)", f"{median(steady['auto']):,.0f}", "(info)", ""],
        ["auto / none, per run (median)", f"{ratio:.3f}", f">= {GOAL}", "met" if ratio >= GOAL else "MISSED"],
        ["auto / none, range over runs", f"{min(ratios):.3f} - {max(ratios):.3f}", "(info)", ""],
    ]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
