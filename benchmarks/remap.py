"""remap: lines per CPU-second of a pipeline with a remap transform against the same pipeline without it.

Run from the repository root::

    .venv/bin/python -m benchmarks remap [--lines 400000] [--runs 5] [--only context,merge,deepflow]
        [--before-ref REF] [--profile DIR]

Three programs, each on its own pod tree (20 files, enriched from the apiserver
emulator), pods -> [remap] -> console (/dev/null):

- ``context``: five ``del(.kubernetes.…)`` and a rename (``.k8s = del(.kubernetes)``), on plain lines
  (runs once per file context, not per record); goal >= 0.9;
- ``merge``: ``. = merge(., parse_json!(string!(.message))) ?? .`` on ~300 B JSON messages; goal >= 0.5;
- ``deepflow``: DeepFlow's documented program (parse JSON if it is JSON, else ``parse_regex`` a level,
  defaults) on half JSON, half text lines; goal >= 0.4.

Each run is a fresh agent (``logagent run --once``); with and without alternate within each round, and
each one's start-up (a run on a tiny tree) is subtracted. Ratios are per CPU-second within a round;
medians of the rounds are reported, with the peak RSS difference (max over rounds, goal <= 5 MiB).
``--before-ref REF`` adds a third variant to each round: the same program on the package ``logagent`` as
it was at REF (``git archive``), so before and after are measured in one run.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from io import BytesIO
from pathlib import Path

from benchmarks.agent_runs import Measured, alternated, run_enriched
from benchmarks.common import REPO, machine_line, median, table
from benchmarks.parse_json import _message
from benchmarks.pod_tree import PodSpec, cri_timestamp, pod_specs, start_cluster, stream_of, write_pod_log

CONTEXT = """
del(.kubernetes.pod_labels)
del(.kubernetes.pod_annotations)
del(.kubernetes.namespace_labels)
del(.kubernetes.node_labels)
del(.kubernetes.container_id)
.k8s = del(.kubernetes)
"""
MERGE = ". = merge(., parse_json!(string!(.message))) ?? ."
DEEPFLOW = r"""
if is_string(.message) && is_json(string!(.message)) {
    tags = parse_json(.message) ?? {}
    .message = tags.message
    del(tags.message)
    .json = tags
}
if !exists(.level) {
   if exists(.json) {
      .level = .json.level
      del(.json.level)
   } else {
      level_tags = parse_regex(.message, r'[\s\[](?<level>INFO|WARN|WARNING|DEBUG|ERROR|TRACE|FATAL)[\s\]]') ?? {}
      .level = level_tags.level
   }
}
if !exists(._df_log_type) {
    ._df_log_type = "user"
}
if !exists(.app_service) {
    .app_service = .kubernetes.container_name
}
"""
PROGRAMS = {"context": (CONTEXT, "plain", 0.9), "merge": (MERGE, "json", 0.5), "deepflow": (DEEPFLOW, "mixed", 0.4)}


def _line(kind: str, seq: int) -> bytes:
    text = b"2026-12-02 10:00:00 [INFO] handled request GET /api/orders/%d in 12 ms" % (seq % 99991)
    if kind == "json" or (kind == "mixed" and seq % 2 == 0):
        return _message(seq)
    return text


def write_tree(root: Path, specs: Sequence[PodSpec], lines_per_file: int, kind: str) -> None:
    for spec in specs:
        write_pod_log(root, spec, [cri_timestamp(seq) + b" " + stream_of(seq) + b" F " + _line(kind, seq)
                                   for seq in range(lines_per_file)])


def pipeline(program: str | None) -> str:
    if program is None:
        return "sinks:\n  console: {type: console, inputs: [pods]}\n"
    body = "\n".join("      " + line for line in program.strip().splitlines())
    return ("transforms:\n  shape:\n    type: remap\n    inputs: [pods]\n    source: |\n" + body + "\n"
            "sinks:\n  console: {type: console, inputs: [shape]}\n")


def measure(workdir: Path, trees: tuple[Path, Path], kubeconfig: Path, tag: str, program: str | None,
            lines: int, code: Path = REPO) -> tuple[float, Measured]:
    big, small = trees
    start = run_enriched(workdir, small, kubeconfig, f"{tag}-start", pipeline=pipeline(program), code=code)
    full = run_enriched(workdir, big, kubeconfig, tag, pipeline=pipeline(program), code=code)
    if full.returncode != 0:
        raise RuntimeError(f"agent run {tag} failed with {full.returncode}")
    return lines / max(full.cpu - start.cpu, 1e-9), full


def rounds(args: argparse.Namespace, workdir: Path, kubeconfig: Path, name: str, trees: tuple[Path, Path],
           total: int, before: Path | None) -> tuple[list[list[object]], list[list[object]]]:
    """(rows, targets) of one program: ``args.runs`` interleaved rounds of without / with (/ before)."""
    program, _, goal = PROGRAMS[name]
    variants = ["without", "with"] + (["before"] if before is not None else [])
    rows: list[list[object]] = []
    ratios: dict[str, list[float]] = {"with": [], "before": []}
    rss = []
    for i in range(args.runs):
        rates, runs = {}, {}
        for variant in alternated(variants, i):
            code = before if variant == "before" and before is not None else REPO
            rates[variant], runs[variant] = measure(workdir, trees, kubeconfig, f"{name}-{variant}{i}",
                                                    None if variant == "without" else program, total, code)
            rows.append([name, i + 1, variant, runs[variant].cpu, rates[variant], runs[variant].peak_rss_kib / 1024])
        for variant in variants[1:]:
            ratios[variant].append(rates[variant] / rates["without"])
        rss.append((runs["with"].peak_rss_kib - runs["without"].peak_rss_kib) / 1024)
        print(f"{name} round {i + 1}: ratio {ratios['with'][-1]:.2f}, RSS +{rss[-1]:.1f} MiB", file=sys.stderr)
    ratio = median(ratios["with"])
    targets: list[list[object]] = [
        [f"{name}: with / without per CPU-s (median of {args.runs})", f"{ratio:.2f}", f">= {goal}",
         "met" if ratio >= goal else "MISSED"],
        [f"{name}: per-round ratios", ", ".join(f"{r:.2f}" for r in ratios["with"]), "(info)", ""]]
    if before is not None:
        targets.append([f"{name}: before ({args.before_ref}) / without (median)", f"{median(ratios['before']):.2f}",
                        "(info)", ""])
    targets.append([f"{name}: peak RSS over without (max)", f"{max(rss):+.1f} MiB", "<= 5 MiB",
                    "met" if max(rss) <= 5 else "MISSED"])
    return rows, targets


def extract(ref: str, into: Path) -> None:
    """The package ``logagent`` at git ``ref`` into ``into`` (run with ``python -m logagent`` from there)."""
    archive = subprocess.run(["git", "archive", ref, "logagent"], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=400_000, help="CRI lines per program (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default=",".join(PROGRAMS), help="comma-separated programs to run")
    parser.add_argument("--before-ref", help="git ref whose remap also runs in each round (before / after in one run)")
    parser.add_argument("--profile", type=Path, help="also record a py-spy profile (raw stacks) of each program once, into this folder")
    args = parser.parse_args(argv)
    names = [name for name in args.only.split(",") if name]
    workdir = Path(tempfile.mkdtemp(prefix="logagent-bench-remap-"))
    specs = pod_specs()
    emulator = None
    rows, targets = [], []
    try:
        before = None
        if args.before_ref:
            before = workdir / "before"
            extract(args.before_ref, before)
        emulator = start_cluster(workdir, specs)
        per_file = args.lines // len(specs)
        total = per_file * len(specs)
        for name in names:
            program, kind, _ = PROGRAMS[name]
            trees = (workdir / f"{name}-pods", workdir / f"{name}-small")
            write_tree(trees[0], specs, per_file, kind)
            write_tree(trees[1], specs, 5, kind)
            if args.profile is not None:
                args.profile.mkdir(parents=True, exist_ok=True)
                out = args.profile / f"{name}.txt"
                run_enriched(workdir, trees[0], emulator.kubeconfig, f"{name}-profile", pipeline=pipeline(program),
                             profile=(out, 250, ()))
                print(f"profile of {name}: {out}", file=sys.stderr)
            more_rows, more_targets = rounds(args, workdir, emulator.kubeconfig, name, trees, total, before)
            rows += more_rows
            targets += more_targets
    finally:
        if emulator is not None:
            emulator.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"## remap: {args.lines:,} CRI lines per program over {len(specs)} files; pods -> [remap] -> console "
          f"({machine_line()})\n")
    print(table(["program", "round", "pipeline", "CPU s", "steady lines/CPU-s", "peak RSS MiB"], rows))
    print()
    print(table(["target", "measured", "goal", ""], targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
