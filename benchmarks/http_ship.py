"""Shipping to HTTP: records per second from files to a local receiver, beside the console sink.

Run from the repository root::

    .venv/bin/python -m benchmarks.http_ship [--lines 400000] [--runs 3]

The same CRI tree as ``throughput.py`` (20 pod files, enrichment from an
offline snapshot of the same pods, no filter) is shipped by ``logagent run
--once`` three ways, interleaved in every run: to the console sink writing to
/dev/null, and to ``tests.receiver`` (its own process, on 127.0.0.1) with the
http sink as ndjson, gzip off and on. ``--once`` returns after every record
was acknowledged (a 2xx), and the receiver's own count is checked against the
number of records. Agent start-up (a tiny tree, console) is subtracted for the
steady rates. Medians of ``--runs`` runs, as markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.throughput import (
    NODE,
    PYTHON,
    REPO,
    Measured,
    agent_args,
    agent_config,
    median,
    pod_objects,
    pod_specs,
    run_measured,
    table,
    write_tree,
)

SINKS = {
    "console (/dev/null)": "sinks:\n  out: {{type: console, inputs: [pods]}}\n",
    "http ndjson": "sinks:\n  out: {{type: http, inputs: [pods], uri: '{uri}', encoding: ndjson, compression: none}}\n",
    "http ndjson + gzip": "sinks:\n  out: {{type: http, inputs: [pods], uri: '{uri}', encoding: ndjson, compression: gzip}}\n",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ReceiverProcess:
    """``python -m tests.receiver`` reporting its accepted-record count every 0.2 s."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.out_path = workdir / "receiver.out"
        self._out = open(self.out_path, "wb")
        self.proc = subprocess.Popen([PYTHON, "-m", "tests.receiver", "--port", str(self.port), "--interval", "0.2"],
                                     cwd=REPO, stdout=self._out, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while b"listening on" not in self.out_path.read_bytes():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the receiver did not start")
            time.sleep(0.05)
        self.uri = f"http://127.0.0.1:{self.port}/logs"

    def records(self) -> int:
        counts = re.findall(rb"records=(\d+)", self.out_path.read_bytes())
        return int(counts[-1]) if counts else 0

    def wait_for(self, total: int, timeout: float = 10.0) -> int:
        deadline = time.monotonic() + timeout
        while (seen := self.records()) < total and time.monotonic() < deadline:
            time.sleep(0.1)
        return seen

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._out.close()


def run_one(workdir: Path, log_dir: Path, snapshot: Path, pipeline: str, tag: str) -> Measured:
    data_dir = workdir / f"data-{tag}"
    shutil.rmtree(data_dir, ignore_errors=True)
    config = agent_config(workdir / f"agent-{tag}.yaml", log_dir=log_dir, data_dir=data_dir,
                          kubernetes=f"{{node_name: {NODE}, snapshot: {snapshot}}}", pipeline=pipeline)
    with open(os.devnull, "wb") as out:
        result = run_measured(agent_args(config), stdout=out.fileno(), stderr_path=workdir / f"agent-{tag}.stderr")
    if result.returncode != 0:
        raise RuntimeError(f"agent {tag} exited {result.returncode}: "
                           f"{(workdir / f'agent-{tag}.stderr').read_text()[-2000:]}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    from apiserver_emulator.objects import make_namespace, make_node

    workdir = Path(tempfile.mkdtemp(prefix="logagent-http-"))
    specs = pod_specs()
    receiver = None
    try:
        tree, small = workdir / "pods", workdir / "pods-startup"
        records = sum(write_tree(tree, specs, args.lines // len(specs)).values())
        write_tree(small, specs, 5)
        items = [make_namespace(ns, labels={"team": "platform"}) for ns in sorted({s.namespace for s in specs})]
        items += [make_node(NODE)] + pod_objects(specs)
        snapshot = workdir / "cluster.json"
        snapshot.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": items}))
        receiver = ReceiverProcess(workdir)
        results: dict[str, list[Measured]] = {name: [] for name in SINKS}
        startup: list[Measured] = []
        expected = 0
        for i in range(args.runs):
            startup.append(run_one(workdir, small, snapshot, SINKS["console (/dev/null)"].format(), f"s{i}"))
            for name, template in SINKS.items():
                pipeline = template.format(uri=receiver.uri)
                results[name].append(run_one(workdir, tree, snapshot, pipeline, f"{i}-{list(SINKS).index(name)}"))
                if name.startswith("http"):
                    expected += records
                    seen = receiver.wait_for(expected)
                    if seen != expected:
                        raise RuntimeError(f"receiver counted {seen} records, expected {expected}")
                m = results[name][-1]
                print(f"run {i + 1} {name}: {m.wall:.2f}s wall {m.cpu:.2f}s cpu", file=sys.stderr)
    finally:
        if receiver is not None:
            receiver.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    wall_s, cpu_s = median([m.wall for m in startup]), median([m.cpu for m in startup])
    rows = []
    console_rate = None
    for name, ms in results.items():
        wall, cpu = median([m.wall for m in ms]), median([m.cpu for m in ms])
        rate = records / max(wall - wall_s, 1e-9)
        console_rate = console_rate or rate
        rows.append([name, wall, cpu, records / wall, rate, records / max(cpu - cpu_s, 1e-9), f"{rate / console_rate:.2f}"])
    print(f"## HTTP shipping: {records:,} records (20 files, enriched, no filter); medians of {args.runs} runs\n")
    print(table(["sink", "wall s", "agent CPU s", "records/s (total)", "records/s (steady)",
                 "records/CPU-s (steady)", "steady vs console"], rows))
    print(f"\nagent start-up subtracted: {wall_s:.2f} s wall, {cpu_s:.2f} s CPU; every record counted by the receiver")
    return 0


if __name__ == "__main__":
    sys.exit(main())
