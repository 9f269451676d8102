"""Shipping to the backends: elasticsearch, loki and opentelemetry sinks beside the ``http`` ndjson sink.

Run from the repository root::

    .venv/bin/python -m benchmarks backends [--lines 200000] [--runs 3] [--sinks loki ...] [--profile DIR]

The CRI tree of ``throughput.py`` (20 pod files, enrichment from an offline
snapshot) is shipped by ``logagent run --once`` four ways, interleaved in
every run: the ``http`` sink (ndjson, to ``receivers.ndjson``) and each backend
sink to ``receivers.backends`` of its kind (an Elasticsearch-like
``_bulk`` answer with one item per record, Loki's 204, an OTLP
``ExportLogsServiceResponse``), each receiver its own process. Compression
off everywhere. The figure is lines per agent CPU-second (start-up
subtracted), as a ratio to the ``http`` ndjson sink of the same run; the
receivers' record counts are checked. Medians of ``--runs`` runs.
``--profile DIR`` runs each sink once more under py-spy (installed by hand
into the venv), raw collapsed stacks into DIR.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.agent_runs import Measured
from benchmarks.common import median, table
from benchmarks.http_ship import run_one
from benchmarks.pod_tree import pod_specs, write_snapshot, write_tree
from benchmarks.receivers import ReceiverProcess

SINKS = {
    "http ndjson": ("receivers.ndjson", [], "sinks:\n  out: {{type: http, inputs: [pods], uri: '{base}/logs'}}\n"),
    "elasticsearch": ("receivers.backends", ["--kind", "elasticsearch"],
                      "sinks:\n  out: {{type: elasticsearch, inputs: [pods], endpoints: ['{base}'],"
                      " bulk: {{index: 'logs-{{{{ kubernetes.pod_namespace }}}}-%Y.%m.%d'}}}}\n"),
    "loki": ("receivers.backends", ["--kind", "loki"],
             "sinks:\n  out: {{type: loki, inputs: [pods], endpoint: '{base}',"
             " labels: {{namespace: '{{{{ kubernetes.pod_namespace }}}}', container: '{{{{ kubernetes.container_name }}}}'}}}}\n"),
    "opentelemetry": ("receivers.backends", ["--kind", "opentelemetry"],
                      "sinks:\n  out: {{type: opentelemetry, inputs: [pods], uri: '{base}/v1/logs'}}\n"),
    "opentelemetry json": ("receivers.backends", ["--kind", "opentelemetry"],
                           "sinks:\n  out: {{type: opentelemetry, inputs: [pods], uri: '{base}/v1/logs',"
                           " encoding: json}}\n"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sinks", nargs="+", choices=[name for name in SINKS if name != "http ndjson"],
                        help="only these backend sinks (the http ndjson baseline always runs)")
    parser.add_argument("--profile", type=Path, help="also record a py-spy profile of each sink once, into this folder")
    args = parser.parse_args(argv)
    sinks = {name: spec for name, spec in SINKS.items() if name == "http ndjson" or not args.sinks or name in args.sinks}
    workdir = Path(tempfile.mkdtemp(prefix="logagent-backends-"))
    specs = pod_specs()
    receivers: dict[str, ReceiverProcess] = {}
    try:
        tree, small = workdir / "pods", workdir / "pods-startup"
        records = sum(write_tree(tree, specs, args.lines // len(specs)).values())
        write_tree(small, specs, 5)
        snapshot = write_snapshot(workdir / "cluster.json", specs)
        receivers = {name: ReceiverProcess(workdir, module, extra, name=f"receiver-{name}")
                     for name, (module, extra, _) in sinks.items()}
        results: dict[str, list[Measured]] = {name: [] for name in sinks}
        startup: list[Measured] = []
        for i in range(args.runs):
            startup.append(run_one(workdir, small, snapshot, "sinks:\n  out: {type: console, inputs: [pods]}\n", f"s{i}"))
            for index, (name, (_, _, template)) in enumerate(sinks.items()):
                pipeline = template.format(base=receivers[name].base)
                results[name].append(run_one(workdir, tree, snapshot, pipeline, f"{i}-{index}"))
                seen = receivers[name].wait_for(records * (i + 1), timeout=20)
                if seen != records * (i + 1):
                    raise RuntimeError(f"{name}: receiver counted {seen} records, expected {records * (i + 1)}")
                m = results[name][-1]
                print(f"run {i + 1} {name}: {m.wall:.2f}s wall {m.cpu:.2f}s cpu", file=sys.stderr)
        if args.profile is not None:
            args.profile.mkdir(parents=True, exist_ok=True)
            for index, (name, (_, _, template)) in enumerate(sinks.items()):
                out = args.profile / f"{name.replace(' ', '-')}.txt"
                run_one(workdir, tree, snapshot, template.format(base=receivers[name].base), f"p{index}", profile=out)
                print(f"profile of {name}: {out}", file=sys.stderr)
    finally:
        for receiver in receivers.values():
            receiver.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    cpu_s = median([m.cpu for m in startup])
    rows = []
    baseline = None
    for name, ms in results.items():
        per_cpu = [records / max(m.cpu - cpu_s, 1e-9) for m in ms]
        rate = median(per_cpu)
        baseline = baseline or rate
        ratios = [p / b for p, b in zip(per_cpu, [records / max(m.cpu - cpu_s, 1e-9) for m in results["http ndjson"]])]
        rows.append([name, median([m.cpu for m in ms]), rate, f"{rate / baseline:.2f}",
                     " ".join(f"{r:.2f}" for r in ratios)])
    print(f"## Backend sinks: {records:,} records (20 files, enriched, no compression); medians of {args.runs} runs\n")
    print(table(["sink", "agent CPU s", "lines/CPU-s (steady)", "vs http ndjson", "per-run ratios"], rows))
    print(f"\nagent start-up subtracted: {cpu_s:.2f} s CPU; every record counted by its receiver")
    if "opentelemetry" in results and "opentelemetry json" in results:
        steady = {name: [records / max(m.cpu - cpu_s, 1e-9) for m in results[name]]
                  for name in ("opentelemetry", "opentelemetry json")}
        per_run = [j / p for j, p in zip(steady["opentelemetry json"], steady["opentelemetry"])]
        print(f"\nopentelemetry json / protobuf, steady lines per CPU-s: {median(per_run):.2f} (median of per-run "
              f"ratios; per run {' '.join(f'{r:.2f}' for r in per_run)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
