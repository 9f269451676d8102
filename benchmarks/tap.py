"""Tap: the pipeline's throughput with no tap, with a stalled tap client, with a reading one.

Run from the repository root::

    .venv/bin/python -m benchmarks tap [--lines 2000000] [--runs 5] [--limit 50] [--interval-ms 500]

Each run starts a fresh agent (``logagent run``, not ``--once``; metadata
from an offline snapshot of the same 20 pods as the throughput benchmark,
its pipeline: filter, route, console to /dev/null; the API on loopback).
Once it is settled, in the ``stalled`` mode a client asks ``/tap`` for the
source's outputs (``--limit`` records every ``--interval-ms``: 100 records/s
by default) and never reads the answer (a receive buffer of 4 KiB); in the
``reading`` mode a client reads everything; ``detached`` has no client. Then
the pod directories, written beforehand, are moved into the log directory
and the agent's CPU time (utime+stime from /proc) is taken from then until
its sink has sent every record (polled on ``/metrics`` every 0.2 s, the same
in every mode). Modes run interleaved, in turn reversed; figures are lines
per CPU-second and the medians of per-run ratios against ``detached``.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.agent_runs import PIPELINE, agent_config, snapshot_kubernetes, work_directory
from benchmarks.common import (
    argument_parser,
    cpu_seconds,
    log,
    machine_line,
    median,
    start_agent,
    table,
    wait_cpu_quiet,
)
from benchmarks.pod_tree import PODS, pod_specs, write_snapshot, write_tree

MODES = ("detached", "stalled", "reading")
SENT = re.compile(r'^logagent_component_sent_events_total\{component_id="console"[^}]*\} ([0-9.e+]+)$', re.M)


def api_url(stderr_path: Path, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in stderr_path.read_text(errors="replace").splitlines():
            if '"health and metrics API listening"' in line:
                return str(json.loads(line)["url"])
        time.sleep(0.05)
    raise TimeoutError("the agent did not log its API address")


def sent(url: str) -> float:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as answer:
        match = SENT.search(answer.read().decode())
    return float(match.group(1)) if match else 0.0


class TapClient:
    """A raw HTTP client of /tap: ``stalled`` reads the first byte and no more; else it reads everything."""

    def __init__(self, url: str, limit: int, interval_ms: int, stalled: bool) -> None:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        self.sock = socket.socket()
        if stalled:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.connect((host, int(port)))
        self.sock.sendall(f"GET /tap?outputs_of=pods&limit={limit}&interval_ms={interval_ms} HTTP/1.1\r\n"
                          "Host: bench\r\n\r\n".encode())
        if not self.sock.recv(1):
            raise RuntimeError("the tap answered nothing")
        self.received = 0
        self._reader = None if stalled else threading.Thread(target=self._read, daemon=True)
        if self._reader is not None:
            self._reader.start()

    def _read(self) -> None:
        try:
            while chunk := self.sock.recv(1 << 16):
                self.received += len(chunk)
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()


def one_run(workdir: Path, staging: Path, expected: int, mode: str, tag: str, args: Any) -> float:
    """CPU seconds the agent took for the whole tree in ``mode``."""
    log_dir = workdir / f"logs-{tag}"
    log_dir.mkdir()
    tree = workdir / f"tree-{tag}"
    shutil.copytree(staging, tree)
    config = agent_config(workdir / f"agent-{tag}.yaml", log_dir=log_dir, data_dir=workdir / f"data-{tag}",
                          kubernetes=snapshot_kubernetes(workdir / "snapshot.json"), pipeline=PIPELINE)
    config.write_text(config.read_text().replace("api: {enabled: false}", 'api: {enabled: true, address: "127.0.0.1:0"}'))
    agent = start_agent(config, workdir / f"agent-{tag}.stderr")
    client = None
    try:
        url = api_url(agent.stderr_path)
        wait_cpu_quiet(agent.pid)
        if mode != "detached":
            client = TapClient(url, args.limit, args.interval_ms, stalled=mode == "stalled")
        start = cpu_seconds(agent.pid)
        for pod_dir in tree.iterdir():
            pod_dir.rename(log_dir / pod_dir.name)
        deadline = time.monotonic() + 600
        while sent(url) < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{mode}: not every record was sent")
            time.sleep(0.2)
        return cpu_seconds(agent.pid) - start
    finally:
        if client is not None:
            client.close()
        agent.stop()
        shutil.rmtree(log_dir, ignore_errors=True)
        shutil.rmtree(workdir / f"data-{tag}", ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser("tap", __doc__)
    parser.add_argument("--lines", type=int, default=2_000_000, help="physical CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--limit", type=int, default=50, help="records per interval the tap asks for")
    parser.add_argument("--interval-ms", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)
    specs = pod_specs()
    with work_directory("logagent-bench-tap-", args.keep) as workdir:
        write_snapshot(workdir / "snapshot.json", specs)
        records = write_tree(workdir / "staging", specs, args.lines // PODS)
        expected = sum(records[s.dir_name] for s in specs if s.frontend)  # the filter keeps the frontend half
        total = sum(records.values())
        cpu: dict[str, list[float]] = {mode: [] for mode in MODES}
        for run in range(args.runs):
            order = MODES if run % 2 == 0 else MODES[::-1]
            for mode in order:
                cpu[mode].append(one_run(workdir, workdir / "staging", expected, mode, f"{mode}{run}", args))
                log(f"run {run + 1} {mode}: {cpu[mode][-1]:.2f} CPU-s")
    rate = args.limit * 1000 / args.interval_ms
    rows = [[mode, f"{total / median(cpu[mode]):,.0f}",
             f"{median(d / c for d, c in zip(cpu['detached'], cpu[mode])):.3f}"] for mode in MODES]
    print(f"{machine_line()}; {total:,} records, {args.runs} interleaved runs, tap asking {rate:.0f} records/s\n")
    print(table(["mode", "records per CPU-second (median)", "throughput vs detached (median of per-run ratios)"], rows))
    return 0
