"""Shipping to HTTP: lines per agent CPU-second, none / gzip / zstd, beside the console sink.

Run from the repository root::

    .venv/bin/python -m benchmarks http [--lines 400000] [--runs 3] [--receiver count|check] [--profile DIR]
                                        [--max-events N] [--levels 1 3 6] [--bytecode]

The same CRI tree as ``throughput.py`` (20 pod files, enrichment from an
offline snapshot of the same pods, no filter) is shipped by ``logagent run
--once`` four ways, interleaved in every run: to the console sink writing to
/dev/null, and to ``receivers.ndjson`` (its own process, on 127.0.0.1) with the
http sink as ndjson, uncompressed, gzip and zstd (default levels). ``--once``
returns after every record was acknowledged (a 2xx), and the receiver's own
count is checked against the number of records. Reported per sink (medians of
``--runs``): lines per agent CPU-second (utime+stime of the agent process,
all threads, start-up included and, "steady", with the start-up of a tiny
tree subtracted), wall records/s, bytes per line on the wire (the receiver's
count of request body bytes as sent), and the agent's peak RSS; the ratios to
the console sink of the same run are the figures to quote: "vs console" is
the ratio of the medians, "vs console, median per round" the median of each
round's ratio (rounds are interleaved, so this one cancels the machine's
drift between rounds), "per round" lists them. ``--profile DIR``
runs each http variant once more under py-spy (``--subprocesses``, raw
collapsed stacks into DIR).

The receiver counts records by line ends as the bodies stream in
(``--count-only``, the default ``--receiver count``) or, with ``--receiver
check`` (the method before 2026-12-03), reads each body whole first; its CPU
per run is reported too, so that work moved between agent and receiver shows.

A row "floor: console + bare sender" adds to the console run's CPU what
``BARE_SENDER`` spends posting the same bytes to the same receiver with
``os.writev`` and nothing else: the best ratio an uncompressed http sink can
reach here.

A control row, "console, receiver busy", runs the console sink while a second
receiver is kept busy by a client posting uncompressed ndjson, as the http
runs keep theirs: on two cores the receiver's work slows the agent's own
(shared caches, memory bandwidth), and this row shows by how much.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks.agent_runs import Measured, run_once, snapshot_kubernetes
from benchmarks.common import PYTHON, REPO, median, table
from benchmarks.pod_tree import pod_specs, write_snapshot, write_tree
from benchmarks.receivers import ReceiverProcess
from logagent.sinks.http.config import BatchConfig

HTTP = "sinks:\n  out: {{type: http, inputs: [pods], uri: '{uri}', encoding: ndjson, compression: %s}}\n"
SINKS = {
    "console (/dev/null)": "sinks:\n  out: {{type: console, inputs: [pods]}}\n",
    "http none": HTTP % "none",
    "http gzip": HTTP % "gzip",
    "http zstd": HTTP % "zstd",
}


#: posts uncompressed ndjson bodies of ~9 MB to argv[1] until killed
LOAD_CLIENT = """
import http.client, sys, urllib.parse
uri = urllib.parse.urlsplit(sys.argv[1])
body = b'{"message":"%s","kubernetes":{"pod_name":"load"}}\\n' % (b"x" * 1700) * 5000
connection = http.client.HTTPConnection(uri.hostname, uri.port)
while True:
    connection.request("POST", uri.path, body=body, headers={"Content-Type": "application/x-ndjson"})
    connection.getresponse().read()
"""
#: The least an HTTP shipper can spend on the same bytes: argv[1] uri, argv[2] records, argv[3] bytes per
#: line, argv[4] records per request. Each body goes out as the agent's does (records and line ends as
#: separate buffers, os.writev 1024 at a time, headers sent first) on a blocking socket, with no batching,
#: retries or bookkeeping. Prints the CPU seconds of the sending loop (start-up excluded).
BARE_SENDER = """
import os, resource, socket, sys, urllib.parse
uri = urllib.parse.urlsplit(sys.argv[1])
records, line_bytes, per_request = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
body_parts = []
for i in range(per_request):
    body_parts += (b'{"m":"' + b"%08d" % i + b"x" * (line_bytes - 17) + b'"}', b"\\n")
sock = socket.create_connection((uri.hostname, uri.port))
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
before = resource.getrusage(resource.RUSAGE_SELF)
for start in range(0, records, per_request):
    parts = body_parts[: 2 * min(per_request, records - start)]
    head = "POST %s HTTP/1.1\\r\\nHost: %s\\r\\nContent-Type: application/x-ndjson\\r\\nContent-Length: %d\\r\\n\\r\\n"
    sock.sendall((head % (uri.path, uri.netloc, sum(map(len, parts)))).encode())
    for first in range(0, len(parts), 1024):
        group = parts[first : first + 1024]
        sent = os.writev(sock.fileno(), group)
        if sent < sum(map(len, group)):
            sock.sendall(b"".join(group)[sent:])
    answer = b""
    while not answer.endswith(b"ok"):
        answer += sock.recv(65536)
after = resource.getrusage(resource.RUSAGE_SELF)
print(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
"""
CONTROL = "console, receiver busy"


def sinks_for(max_events: int | None, levels: Sequence[int] = ()) -> dict[str, str]:
    """``SINKS``, the http ones with ``batch.max_events`` set when it is given, and gzip/zstd at ``levels``."""
    sinks = dict(SINKS)
    for level in levels:
        for codec in ("gzip", "zstd"):
            sinks[f"http {codec} {level}"] = HTTP % f"{codec}, compression_level: {level}"
    if max_events is None:
        return sinks
    batch = f"batch: {{{{max_events: {max_events}}}}}, compression:"
    return {name: template.replace("compression:", batch) for name, template in sinks.items()}


class BusyReceiver:
    """A receiver of its own, kept busy by ``LOAD_CLIENT`` while a control run lasts."""

    def __init__(self, workdir: Path, receiver_args: Sequence[str] = ()) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.receiver = ReceiverProcess(workdir, args=receiver_args)
        self.client: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> BusyReceiver:
        self.client = subprocess.Popen([PYTHON, "-c", LOAD_CLIENT, self.receiver.uri])
        seen = self.receiver.wait_for(1)  # the load is on before the agent starts
        if not seen:
            raise RuntimeError("the load client did not reach its receiver")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.client is not None
        self.client.kill()
        self.client.wait()

    def stop(self) -> None:
        self.receiver.stop()


#: the agents' environment: None inherits this process's (set by ``--bytecode``)
AGENT_ENV: dict[str, str] | None = None


def run_one(workdir: Path, log_dir: Path, snapshot: Path, pipeline: str, tag: str,
            profile: Path | None = None) -> Measured:
    return run_once(workdir, log_dir, tag, kubernetes=snapshot_kubernetes(snapshot), pipeline=pipeline,
                    profile=(profile, 500, ("--threads",)) if profile else None, env=AGENT_ENV)


@contextmanager
def compiled_bytecode() -> Iterator[None]:
    """The agent's modules compiled to bytecode for the runs, as the image ships them; removed afterwards.

    Without it an environment with ``PYTHONDONTWRITEBYTECODE=1`` (as on the
    machines these run on) compiles every module from source in every run,
    which adds the same start-up CPU to every sink's figure.
    """
    global AGENT_ENV
    package = REPO / "logagent"
    existing = {path for path in package.rglob("__pycache__")}
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(package)], check=True)
    AGENT_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    try:
        yield
    finally:
        AGENT_ENV = None
        for path in package.rglob("__pycache__"):
            if path not in existing:
                shutil.rmtree(path, ignore_errors=True)


def build_inputs(workdir: Path, lines: int) -> tuple[Path, Path, Path, int]:
    """The pods tree, a tiny tree for start-up, the offline snapshot; and the record count."""
    specs = pod_specs()
    tree, small = workdir / "pods", workdir / "pods-startup"
    records = sum(write_tree(tree, specs, lines // len(specs)).values())
    write_tree(small, specs, 5)
    return tree, small, write_snapshot(workdir / "cluster.json", specs), records


FLOOR = "floor: console + bare sender"
#: how the receiver counts records: by line ends as bodies stream in, or reading and checking each body
RECEIVER_ARGS = {"count": ["--count-only"], "check": []}


def bare_send(uri: str, records: int, line_bytes: int, per_request: int) -> float:
    """CPU seconds ``BARE_SENDER`` spends posting ``records`` lines of ``line_bytes`` bytes."""
    done = subprocess.run([PYTHON, "-c", BARE_SENDER, uri, str(records), str(line_bytes), str(per_request)],
                          capture_output=True, check=True, timeout=300)
    return float(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--receiver", choices=sorted(RECEIVER_ARGS), default="count",
                        help="count: the receiver counts line ends as bodies stream in (default); "
                             "check: it reads every body whole first (the method before 2026-12-03)")
    parser.add_argument("--profile", type=Path, help="also record py-spy profiles of the http variants here")
    parser.add_argument("--max-events", type=int, help="batch.max_events of the http sinks (default: the sink's)")
    parser.add_argument("--levels", type=int, nargs="*", default=[],
                        help="also gzip and zstd at these compression_level values (e.g. 1 3 6)")
    parser.add_argument("--bytecode", action="store_true",
                        help="run the agents with their modules compiled to bytecode first (as the image ships "
                             "them), even where PYTHONDONTWRITEBYTECODE=1 would make each run compile them")
    args = parser.parse_args(argv)
    if args.bytecode:
        with compiled_bytecode():
            return measure(args)
    return measure(args)


def measure(args: argparse.Namespace) -> int:
    sinks = sinks_for(args.max_events, args.levels)

    workdir = Path(tempfile.mkdtemp(prefix="logagent-http-"))
    receiver = busy = None
    names = [*sinks, CONTROL, FLOOR]
    results: dict[str, list[Measured]] = {name: [] for name in names}
    wire: dict[str, list[int]] = {name: [] for name in names}
    receiver_cpu: dict[str, list[float]] = {name: [] for name in names}
    startup: list[Measured] = []
    try:
        tree, small, snapshot, records = build_inputs(workdir, args.lines)
        receiver = ReceiverProcess(workdir, args=RECEIVER_ARGS[args.receiver])
        busy = BusyReceiver(workdir / "busy", RECEIVER_ARGS[args.receiver])
        expected = 0

        def received(name: str, cpu_before: float, bytes_before: int) -> None:
            seen = receiver.wait_for(expected)
            if seen != expected:
                raise RuntimeError(f"receiver counted {seen} records, expected {expected}")
            time.sleep(0.3)  # the byte count is printed with the record count
            wire[name].append(receiver.bytes() - bytes_before)
            receiver_cpu[name].append(receiver.cpu() - cpu_before)

        for i in range(args.runs):
            startup.append(run_one(workdir, small, snapshot, SINKS["console (/dev/null)"].format(), f"s{i}"))
            for name, template in sinks.items():
                before, cpu_before = receiver.bytes(), receiver.cpu()
                results[name].append(run_one(workdir, tree, snapshot, template.format(uri=receiver.uri),
                                             f"{i}-{list(sinks).index(name)}"))
                if name.startswith("http"):
                    expected += records
                    received(name, cpu_before, before)
                m = results[name][-1]
                print(f"run {i + 1} {name}: {m.wall:.2f}s wall {m.cpu:.2f}s cpu {m.peak_rss_kib} KiB", file=sys.stderr)
            with busy:
                results[CONTROL].append(run_one(workdir, tree, snapshot, SINKS["console (/dev/null)"].format(),
                                                f"{i}-control"))
            m = results[CONTROL][-1]
            print(f"run {i + 1} {CONTROL}: {m.wall:.2f}s wall {m.cpu:.2f}s cpu", file=sys.stderr)
            before, cpu_before = receiver.bytes(), receiver.cpu()
            line_bytes = round(wire["http none"][-1] / records)
            sender_cpu = bare_send(receiver.uri, records, line_bytes, BatchConfig().max_events)
            expected += records
            received(FLOOR, cpu_before, before)
            console = results["console (/dev/null)"][-1]
            results[FLOOR].append(Measured(float("nan"), console.cpu + sender_cpu, 0))
            print(f"run {i + 1} {FLOOR}: bare sender {sender_cpu:.2f}s cpu", file=sys.stderr)
        if args.profile is not None:
            args.profile.mkdir(parents=True, exist_ok=True)
            for name, template in sinks.items():
                out = args.profile / (name.split()[-1].strip("()/").replace("/", "_") + ".txt")
                run_one(workdir, tree, snapshot, template.format(uri=receiver.uri), f"p-{out.stem}", profile=out)
                expected += records if name.startswith("http") else 0
                receiver.wait_for(expected)
    finally:
        if receiver is not None:
            receiver.stop()
        if busy is not None:
            busy.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(report(results, wire, receiver_cpu, startup, records, args))
    return 0


def report(results: dict[str, list[Measured]], wire: dict[str, list[int]], receiver_cpu: dict[str, list[float]],
           startup: list[Measured], records: int, args: argparse.Namespace) -> str:
    wall_s, cpu_s = median([m.wall for m in startup]), median([m.cpu for m in startup])
    rows = []
    base: tuple[float, float] | None = None
    console = [m.cpu for m in next(iter(results.values()))]
    control = records / median([m.cpu for m in results[CONTROL]]) if results.get(CONTROL) else None
    for name, ms in results.items():
        wall, cpu = median([m.wall for m in ms]), median([m.cpu for m in ms])
        per_cpu, steady = records / cpu, records / max(cpu - cpu_s, 1e-9)
        base = base or (per_cpu, steady)
        wire_bytes = f"{median(wire[name]) / records:.1f}" if wire[name] else "-"
        per_run = [c / m.cpu for c, m in zip(console, ms)]  # lines per CPU-s against console's, round by round
        rows.append([name, per_cpu, f"{per_cpu / base[0]:.2f}", f"{median(per_run):.2f}",
                     " ".join(f"{r:.2f}" for r in per_run), steady, f"{steady / base[1]:.2f}",
                     f"{per_cpu / control:.2f}" if control else "-",
                     records / wall if wall == wall else "-", wire_bytes,
                     f"{median(receiver_cpu[name]):.2f}" if receiver_cpu[name] else "-",
                     round(median([m.peak_rss_kib for m in ms]) / 1024) if ms[0].peak_rss_kib else "-"])
    head = (f"## HTTP shipping: {records:,} records (20 files, enriched, no filter); medians of {args.runs} runs; "
            f"receiver: {args.receiver}"
            + (f"; http batch.max_events: {args.max_events}" if args.max_events else "") + "\n\n")
    body = table(["sink", "lines/CPU-s", "vs console", "vs console, median per round", "per round",
                  "lines/CPU-s (steady)", "steady vs console",
                  f"vs {CONTROL}", "wall records/s", "bytes/line on the wire", "receiver CPU-s",
                  "peak RSS MiB"], rows)
    return (head + body + f"\n\nagent start-up (subtracted for 'steady'): {wall_s:.2f} s wall, {cpu_s:.2f} s CPU; "
            "every record counted by the receiver; modules "
            + ("compiled to bytecode before the runs (--bytecode)" if args.bytecode else "as the environment has them"))


if __name__ == "__main__":
    sys.exit(main())
