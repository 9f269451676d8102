"""parse_json: the throughput pipeline on ~300 B JSON messages, with and without parse_json.

Run from the repository root::

    .venv/bin/python -m benchmarks parse_json [--lines 1000000] [--runs 5] [--target parsed] [--profile out.txt]

The files: CRI lines whose messages are JSON objects of about 300 bytes (a
typical structured service log: level, logger, msg, HTTP fields, trace ids),
over 20 pod files, enriched from the apiserver emulator. Two pipelines, both
the throughput benchmark's filter on a pod label and route on ``.stream`` into
the console sink (/dev/null), and the same with a ``parse_json`` (``field:
message``, ``--target``, default ``parsed``; ``.`` merges) either first (every
line parsed) or after the filter (the kept half parsed). Each run starts a
fresh agent (``logagent run --once``); the three pipelines alternate within
each round on the same files, and each one's start-up (a run on a tiny tree)
is subtracted to give its steady rate. Ratios are with / without per
CPU-second, taken within each round; medians are reported.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.agent_runs import FILTER, Measured, run_enriched
from benchmarks.common import median, table
from benchmarks.pod_tree import PodSpec, cri_timestamp, pod_specs, start_cluster, stream_of, write_pod_log

#: JSON message size the generator aims at
MESSAGE_BYTES = 300


def _message(seq: int) -> bytes:
    record = {
        "ts": f"2026-12-02T10:{seq // 60000 % 60:02d}:{seq // 1000 % 60:02d}.{seq % 1000:03d}Z",
        "level": "error" if seq % 50 == 0 else "info",
        "logger": "orders.Api",
        "msg": "handled request",
        "method": "GET",
        "path": f"/api/orders/{seq % 99991}",
        "status": 200,
        "duration_ms": round(seq % 977 / 7, 3),
        "user_id": f"u-{seq % 100003:06d}",
        "trace_id": f"{seq * 2654435761 % (1 << 64):016x}{seq:016x}",
        "span_id": f"{seq * 40503 % (1 << 32):08x}{seq % 65536:08x}",
        "bytes": seq % 65536,
        "seq": seq,
    }
    body = json.dumps(record, separators=(",", ":"))
    pad = MESSAGE_BYTES - len(body) - len(',"pad":""')
    if pad >= 0:
        body = body[:-1] + ',"pad":"' + "x" * pad + '"}'
    return body.encode()


def write_tree(root: Path, specs: Sequence[PodSpec], lines_per_file: int) -> int:
    """``lines_per_file`` CRI lines of JSON messages per pod; returns the mean message size."""
    sizes = 0
    for spec in specs:
        out = []
        for seq in range(lines_per_file):
            message = _message(seq)
            sizes += len(message)
            out.append(cri_timestamp(seq) + b" " + stream_of(seq) + b" F " + message)
        write_pod_log(root, spec, out)
    return sizes // max(1, lines_per_file * len(specs))


def pipeline(parse_target: str | None, place: str = "first") -> str:
    """The throughput pipeline; with ``parse_target``, a parse_json first or after the filter."""
    parse = f"  parse: {{type: parse_json, inputs: [%s], target: '{parse_target}'}}\n"
    keep_input, route_input, text = "pods", "keep", "transforms:\n"
    if parse_target is not None and place == "first":
        text += parse % "pods"
        keep_input = "parse"
    elif parse_target is not None:
        text += parse % "keep"
        route_input = "parse"
    return text + (
        f"  keep: {{type: filter, inputs: [{keep_input}], condition: '{FILTER}'}}\n"
        "  by_stream:\n"
        "    type: route\n"
        f"    inputs: [{route_input}]\n"
        "    route:\n"
        "      out: '.stream == \"stdout\"'\n"
        "      err: '.stream == \"stderr\"'\n"
        "sinks:\n"
        "  console: {type: console, inputs: [by_stream.out, by_stream.err]}\n"
    )


def run_agent(workdir: Path, log_dir: Path, kubeconfig: Path, tag: str, parse_target: str | None,
              place: str = "first", *, stdout_path: Path | None = None, profile: Path | None = None) -> Measured:
    return run_enriched(workdir, log_dir, kubeconfig, tag, pipeline=pipeline(parse_target, place),
                        stdout_path=stdout_path, profile=(profile, 1000, ()) if profile else None)


def check_output(workdir: Path, log_dir: Path, kubeconfig: Path, target: str, expected: int) -> str:
    """One small run into a file: every kept record carries its message's object."""
    out = workdir / "check.ndjson"
    run_agent(workdir, log_dir, kubeconfig, "check", target, stdout_path=out)
    got = [json.loads(line) for line in out.read_bytes().splitlines()]
    problems = []
    if len(got) != expected:
        problems.append(f"{len(got)} records, expected {expected}")
    for record in got:
        obj = json.loads(record["message"])
        parsed = record.get("parsed") if target.strip(".") == "parsed" else {k: record[k] for k in obj if k in record}
        if parsed != obj:
            problems.append(f"record without its parsed object: {record}")
            break
    if problems:
        raise RuntimeError("output check failed: " + "; ".join(problems))
    return f"output check: {len(got):,} records, each with its parsed object (target {target!r})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000, help="CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--target", default="parsed", help='parse_json target: a key such as "parsed", or "."')
    parser.add_argument("--profile", type=Path, help="also record one run with parse_json under py-spy")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="logagent-bench-json-"))
    specs = pod_specs()
    emulator = None
    variants = (("without", None, ""), ("parse_json first", args.target, "first"),
                ("parse_json after the filter", args.target, "after"))
    steady: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    ratios: dict[str, list[float]] = {name: [] for name, _, _ in variants[1:]}
    rows = []
    try:
        big, small, check = workdir / "pods", workdir / "pods-startup", workdir / "pods-check"
        size = write_tree(big, specs, args.lines // len(specs))
        write_tree(small, specs, 5)
        write_tree(check, specs, 500)
        total = args.lines // len(specs) * len(specs)
        emulator = start_cluster(workdir, specs)
        print(check_output(workdir, check, emulator.kubeconfig, args.target, 500 * sum(s.frontend for s in specs)),
              file=sys.stderr)
        for i in range(args.runs):
            rates = {}
            for name, target, place in variants:  # interleaved: drift of the machine hits all alike
                start = run_agent(workdir, small, emulator.kubeconfig, f"startup{i}", target, place)
                full = run_agent(workdir, big, emulator.kubeconfig, f"run{i}", target, place)
                rates[name] = total / max(full.cpu - start.cpu, 1e-9)
                steady[name].append(rates[name])
                rows.append([i + 1, name, full.wall, full.cpu, start.cpu, rates[name]])
            for name in ratios:
                ratios[name].append(rates[name] / rates["without"])
            print(f"round {i + 1}: " + ", ".join(f"{name} {r[-1]:.2f}" for name, r in ratios.items()), file=sys.stderr)
        if args.profile:
            run_agent(workdir, big, emulator.kubeconfig, "profile", args.target, profile=args.profile)
            print(f"profile written to {args.profile}", file=sys.stderr)
    finally:
        if emulator is not None:
            emulator.stop()
        if args.keep:
            print(f"work directory kept: {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    print(f"## parse_json: {total:,} CRI lines, JSON messages of {size} B, over {len(specs)} files; "
          f"target {args.target!r}; filter (keeps half) + route + console to /dev/null\n")
    print(table(["round", "pipeline", "wall s", "CPU s", "start-up CPU s", "steady lines/CPU-s"], rows))
    print()
    summary = [[name, median(values)] for name, values in steady.items()]
    print(table([f"medians of {args.runs} rounds", "steady lines/CPU-s"], summary))
    print()
    targets = []
    for name, values in ratios.items():
        ratio = median(values)
        targets.append([f"{name} / without (per CPU-s, median of per-round ratios)", f"{ratio:.2f}", ">= 0.6",
                        "met" if ratio >= 0.6 else "MISSED"])
        targets.append([f"{name}: per-round ratios", ", ".join(f"{r:.2f}" for r in values), "(info)", ""])
    print(table(["target", "measured", "goal", ""], targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
