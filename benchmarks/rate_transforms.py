"""throttle, sample, dedupe: the throughput pipeline with each of them in front, against the pipeline without.

Run from the repository root::

    .venv/bin/python -m benchmarks rate-transforms [--lines 1000000] [--runs 5]

The throughput benchmark's tree (20 pod files, enriched from the apiserver
emulator) and pipeline (filter on a pod label, route on ``.stream``, console
to /dev/null), with one more transform before the filter: ``throttle`` per
namespace with a threshold no file reaches (every record is judged and
kept: the transform's own cost, not the savings of dropping), ``sample``
(``rate: 1``, keeps all and adds ``sample_rate``), ``dedupe`` (Vector's
default fields ``message``, ``host``, ``timestamp`` and the record's ``file``:
the 20 files hold the same messages at the same timestamps, so without the
file 19 lines in 20 would be duplicates and dropped, which measures the
savings of dropping, not the transform; with it every record is distinct). Each run is a fresh ``logagent run --once``;
the variants alternate within each round, each one's start-up (a run on a
tiny tree) is subtracted, and the ratios with / without per CPU-second are
taken within each round (medians reported).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.agent_runs import PIPELINE, Measured, alternated, run_enriched, work_directory
from benchmarks.common import median, table
from benchmarks.pod_tree import pod_specs, start_cluster, write_tree

TARGET = 0.8
FRONT = {
    "without": None,
    "throttle": "{type: throttle, inputs: [pods], threshold: 100000000, window_secs: 1, "
                "key_field: '{{ kubernetes.pod_namespace }}'}",
    "sample": "{type: sample, inputs: [pods], rate: 1}",
    "dedupe": "{type: dedupe, inputs: [pods], fields: {match: [message, host, timestamp, file]}}",
}


def pipeline(front: str | None) -> str:
    if front is None:
        return PIPELINE
    return PIPELINE.replace("transforms:\n", f"transforms:\n  front: {front}\n", 1).replace(
        "inputs: [pods], condition", "inputs: [front], condition", 1)


def run(workdir: Path, log_dir: Path, kubeconfig: Path, tag: str, front: str | None,
        stdout_path: Path | None = None) -> Measured:
    return run_enriched(workdir, log_dir, kubeconfig, tag, pipeline=pipeline(front), stdout_path=stdout_path)


def check_nothing_dropped(workdir: Path, log_dir: Path, kubeconfig: Path) -> None:
    """Every variant delivers what the pipeline without delivers: the figures are the transforms' cost."""
    delivered = {}
    for name, front in FRONT.items():
        out = workdir / f"check-{name}.ndjson"
        run(workdir, log_dir, kubeconfig, f"check-{name}", front, stdout_path=out)
        delivered[name] = out.read_bytes().count(b"\n")
    if len(set(delivered.values())) != 1 or not delivered["without"]:
        raise SystemExit(f"a variant dropped records: {delivered}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000, help="CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=[n for n in FRONT if n != "without"],
                        help="measure only these transforms (against without)")
    args = parser.parse_args(argv)
    if args.only:
        for name in [n for n in FRONT if n != "without" and n not in args.only]:
            del FRONT[name]
    specs = pod_specs()
    steady: dict[str, list[float]] = {name: [] for name in FRONT}
    ratios: dict[str, list[float]] = {name: [] for name in FRONT if name != "without"}
    rows = []
    with work_directory("logagent-bench-rate-") as workdir:
        big, small = workdir / "pods", workdir / "pods-startup"
        write_tree(big, specs, args.lines // len(specs))
        write_tree(small, specs, 5)
        total = args.lines // len(specs) * len(specs)
        emulator = start_cluster(workdir, specs)
        try:
            check_nothing_dropped(workdir, small, emulator.kubeconfig)
            for i in range(args.runs):
                rates = {}
                for name in alternated(list(FRONT), i):
                    start = run(workdir, small, emulator.kubeconfig, f"startup{i}", FRONT[name])
                    full = run(workdir, big, emulator.kubeconfig, f"run{i}", FRONT[name])
                    rates[name] = total / max(full.cpu - start.cpu, 1e-9)
                    steady[name].append(rates[name])
                    rows.append([i + 1, name, full.wall, full.cpu, start.cpu, rates[name]])
                for name in ratios:
                    ratios[name].append(rates[name] / rates["without"])
                print(f"round {i + 1}: " + ", ".join(f"{n} {r[-1]:.2f}" for n, r in ratios.items()), file=sys.stderr)
        finally:
            emulator.stop()
    print(f"## rate transforms: {total:,} CRI lines over {len(specs)} files; X -> filter -> route -> console\n")
    print(table(["round", "front transform", "wall s", "CPU s", "start-up CPU s", "steady lines/CPU-s"], rows))
    print()
    targets = []
    for name, values in ratios.items():
        ratio = median(values)
        targets.append([f"{name} / without (per CPU-s, median of per-round ratios)", f"{ratio:.2f}", f">= {TARGET}",
                        "met" if ratio >= TARGET else "MISSED"])
        targets.append([f"{name}: per-round ratios", ", ".join(f"{r:.2f}" for r in values), "(info)", ""])
    print(table(["target", "measured", "goal", ""], targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
