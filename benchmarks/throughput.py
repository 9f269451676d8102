"""Throughput: CRI files -> enrichment (apiserver emulator) -> filter -> route -> console (/dev/null).

Run from the repository root::

    .venv/bin/python -m benchmarks.throughput [--lines 2000000] [--runs 3] [--profile out.txt]

Each run starts a fresh agent (``logagent run --once``, fresh data_dir) on the
same files and measures its wall time and CPU time (utime+stime of the child,
from ``os.wait4``). Agent start-up (imports, the metadata sync that ``--once``
waits for) is measured by a run on a tiny tree of the same shape (20 files, a
few lines each) and subtracted to give the steady-state rate. The baseline,
``benchmarks/baseline_loop.py`` (a minimal Python read/split/msgspec-encode
loop), runs on the same files in the same run. Results are medians of
``--runs`` runs, printed as markdown tables.

The helpers here (data tree, emulator process, measured child runs, tables)
are also used by ``latency.py`` and ``http_ship.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
NODE = "node-1"
PODS = 20
#: raw CRI line length (with its newline) the generator aims at
LINE_BYTES = 120
#: every Nth logical line is written as a P fragment plus its F rest
PARTIAL_EVERY = 100
#: every Nth line goes to stderr
STDERR_EVERY = 5
#: the metadata-only filter of the pipeline: half of the pods are "frontend"
FILTER = '.kubernetes.pod_labels.tier == "frontend"'

sys.path.insert(0, str(REPO))  # apiserver_emulator builders, when run as a script


# -- the pods tree -----------------------------------------------------------------------


@dataclass(frozen=True)
class PodSpec:
    namespace: str
    name: str
    uid: str
    container: str
    frontend: bool

    @property
    def dir_name(self) -> str:
        return f"{self.namespace}_{self.name}_{self.uid}"


def pod_specs(count: int = PODS) -> list[PodSpec]:
    from apiserver_emulator.objects import stable_uid

    namespaces = ["shop", "payments", "search", "identity"]
    specs = []
    for i in range(count):
        namespace = namespaces[i % len(namespaces)]
        name = f"svc{i:02d}-7d9f8c6b5-{i:05d}"
        specs.append(PodSpec(namespace, name, stable_uid("pod", namespace, name), "app", frontend=i % 2 == 0))
    return specs


def pod_objects(specs: Sequence[PodSpec]) -> list[dict]:
    """Realistic pods (labels, annotations, owner, IPs) for the emulator."""
    from apiserver_emulator.objects import make_pod

    pods = []
    for i, spec in enumerate(specs):
        app = spec.name.split("-")[0]
        labels = {
            "app": app,
            "app.kubernetes.io/name": app,
            "app.kubernetes.io/instance": f"{app}-prod",
            "app.kubernetes.io/version": f"1.{i}.3",
            "app.kubernetes.io/component": "frontend" if spec.frontend else "backend",
            "app.kubernetes.io/part-of": spec.namespace,
            "app.kubernetes.io/managed-by": "Helm",
            "helm.sh/chart": f"{app}-0.{i}.1",
            "pod-template-hash": "7d9f8c6b5",
            "team": f"team-{i % 3}",
            "tier": "frontend" if spec.frontend else "backend",
        }
        annotations = {
            "kubectl.kubernetes.io/default-container": spec.container,
            "prometheus.io/scrape": "true",
            "prometheus.io/port": "9090",
            "checksum/config": "3f7a" * 16,
            "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
        }
        pods.append(make_pod(spec.name, spec.namespace, node=NODE, uid=spec.uid, labels=labels,
                             annotations=annotations,
                             containers=[(spec.container, f"registry.example.com/{spec.namespace}/{app}:1.{i}.3")]))
    return pods


def _message(seq: int, width: int) -> bytes:
    body = f'level=info msg="handled" path=/api/items/{seq % 9973} status=200 ms={seq % 97} seq={seq:09d}'.encode()
    if len(body) < width:
        body += b" " + b"x" * (width - len(body) - 1)
    return body


def write_tree(root: Path, specs: Sequence[PodSpec], lines_per_file: int) -> dict[str, int]:
    """Write ``lines_per_file`` physical CRI lines per pod; returns logical records per pod dir."""
    records: dict[str, int] = {}
    prefix_len = len("2026-12-02T10:00:00.000000000Z stdout F ")
    width = LINE_BYTES - 1 - prefix_len
    for spec in specs:
        directory = root / spec.dir_name / spec.container
        directory.mkdir(parents=True, exist_ok=True)
        out: list[bytes] = []
        seq = physical = logical = 0
        while physical < lines_per_file:
            stream = b"stderr" if seq % STDERR_EVERY == 0 else b"stdout"
            ts = b"2026-12-02T10:%02d:%02d.%09dZ" % (seq // 60000 % 60, seq // 1000 % 60, seq % 1000 * 1000)
            message = _message(seq, width)
            if seq % PARTIAL_EVERY == PARTIAL_EVERY - 1 and physical + 2 <= lines_per_file:
                half = len(message) // 2
                out.append(ts + b" " + stream + b" P " + message[:half])
                out.append(ts + b" " + stream + b" F " + message[half:])
                physical += 2
            else:
                out.append(ts + b" " + stream + b" F " + message)
                physical += 1
            logical += 1
            seq += 1
        (directory / "0.log").write_bytes(b"\n".join(out) + b"\n")
        records[spec.dir_name] = logical
    return records


# -- processes ------------------------------------------------------------------------------


class Emulator:
    """``python -m apiserver_emulator`` in its own process, filled through its control API."""

    def __init__(self, workdir: Path) -> None:
        self.kubeconfig = workdir / "kubeconfig"
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "apiserver_emulator", "--port", "0", "--token", "bench", "--kubeconfig", str(self.kubeconfig)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().decode().strip()
        if not self.url.startswith("http"):
            self.stop()
            raise RuntimeError("the apiserver emulator did not start")

    def create(self, resource: str, obj: dict) -> None:
        request = urllib.request.Request(f"{self.url}/_emulator/objects/{resource}", data=json.dumps(obj).encode(),
                                         method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_cluster(workdir: Path, specs: Sequence[PodSpec]) -> Emulator:
    from apiserver_emulator.objects import make_namespace, make_node

    emulator = Emulator(workdir)
    for namespace in sorted({s.namespace for s in specs}):
        emulator.create("namespaces", make_namespace(namespace, labels={"team": "platform", "env": "prod"}))
    emulator.create("nodes", make_node(NODE, labels={"topology.kubernetes.io/zone": "zone-a"}))
    for pod in pod_objects(specs):
        emulator.create("pods", pod)
    return emulator


@dataclass
class Measured:
    wall: float
    cpu: float
    returncode: int
    #: the child's peak resident set (ru_maxrss)
    peak_rss_kib: int = 0


def run_measured(args: Sequence[str], *, stdout: int | None = None, stderr_path: Path | None = None,
                 env: dict[str, str] | None = None, timeout: float = 600.0, cwd: Path = REPO) -> Measured:
    """Run a child to its end; wall time and the child's own utime+stime (os.wait4)."""
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(list(args), cwd=cwd, stdout=stdout, stderr=err, env=env)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stderr_path:
            err.close()  # type: ignore[union-attr]
    return Measured(wall, usage.ru_utime + usage.ru_stime, proc.returncode, usage.ru_maxrss)


def agent_config(path: Path, *, log_dir: Path, data_dir: Path, kubernetes: str, pipeline: str) -> Path:
    path.write_text(
        f"data_dir: {data_dir}\n"
        "api: {enabled: false}\n"
        f"kubernetes: {kubernetes}\n"
        "sources:\n"
        f"  pods: {{type: kubernetes_logs, log_dir: {log_dir}}}\n"
        f"{pipeline}"
    )
    return path


PIPELINE = (
    "transforms:\n"
    f"  keep: {{type: filter, inputs: [pods], condition: '{FILTER}'}}\n"
    "  by_stream:\n"
    "    type: route\n"
    "    inputs: [keep]\n"
    "    route:\n"
    "      out: '.stream == \"stdout\"'\n"
    "      err: '.stream == \"stderr\"'\n"
    "sinks:\n"
    "  console: {type: console, inputs: [by_stream.out, by_stream.err]}\n"
)


def agent_args(config: Path, once: bool = True) -> list[str]:
    return [PYTHON, "-m", "logagent", "run", "--config", str(config)] + (["--once"] if once else [])


# -- tables ------------------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:,.3f}" if value < 10 else f"{value:,.0f}"
        if isinstance(value, int):
            return f"{value:,}"
        return str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


# -- the benchmark ------------------------------------------------------------------------------


def run_agent(workdir: Path, log_dir: Path, kubeconfig: Path, tag: str, *, stdout_path: Path | None = None,
              profile: Path | None = None, env: dict[str, str] | None = None, code: Path = REPO) -> Measured:
    """One ``--once`` run; ``code``: the checkout whose ``logagent`` runs (``python -m`` from there)."""
    data_dir = workdir / f"data-{tag}"
    shutil.rmtree(data_dir, ignore_errors=True)
    kubernetes = f"{{node_name: {NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0}}"
    config = agent_config(workdir / f"agent-{tag}.yaml", log_dir=log_dir, data_dir=data_dir,
                          kubernetes=kubernetes, pipeline=PIPELINE)
    args = agent_args(config)
    if profile is not None:
        pyspy = Path(PYTHON).with_name("py-spy")
        args = [str(pyspy), "record", "-r", "250", "-f", "raw", "-o", str(profile), "--"] + args
    out = open(stdout_path or os.devnull, "wb")
    try:
        result = run_measured(args, stdout=out.fileno(), stderr_path=workdir / f"agent-{tag}.stderr", env=env,
                              cwd=code)
    finally:
        out.close()
    if result.returncode != 0:
        tail = (workdir / f"agent-{tag}.stderr").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"agent run {tag} exited {result.returncode}:\n{tail}")
    return result


def run_baseline(log_dir: Path) -> Measured:
    result = run_measured([PYTHON, str(REPO / "benchmarks" / "baseline_loop.py"), str(log_dir)],
                          stdout=subprocess.DEVNULL)
    if result.returncode != 0:
        raise RuntimeError(f"baseline loop exited {result.returncode}")
    return result


def check_output(workdir: Path, log_dir: Path, kubeconfig: Path, specs: Sequence[PodSpec],
                 records: dict[str, int]) -> str:
    """One small run into a file: every kept record is there once and enriched."""
    out = workdir / "check.ndjson"
    run_agent(workdir, log_dir, kubeconfig, "check", stdout_path=out)
    got = [json.loads(line) for line in out.read_bytes().splitlines()]
    expected = sum(records[s.dir_name] for s in specs if s.frontend)
    problems = []
    if len(got) != expected:
        problems.append(f"{len(got)} records, expected {expected}")
    if any(r["kubernetes"]["pod_labels"]["tier"] != "frontend" for r in got):
        problems.append("a backend record passed the filter")
    if any("namespace_labels" not in r["kubernetes"] or "node_labels" not in r["kubernetes"] for r in got):
        problems.append("a record without namespace/node labels")
    if problems:
        raise RuntimeError("output check failed: " + "; ".join(problems))
    return f"output check: {len(got):,} records of {sum(records.values()):,} (filter keeps the frontend half), all enriched"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2_000_000, help="physical CRI lines in total (over 20 files)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="also record one agent run with py-spy (raw/collapsed stacks)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--compare-with", type=Path, metavar="CHECKOUT",
                        help="also run the agent of another checkout (e.g. the commit before a change), interleaved")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="logagent-bench-"))
    specs = pod_specs()
    emulator = None
    try:
        big, small = workdir / "pods", workdir / "pods-startup"
        write_tree(big, specs, args.lines // len(specs))
        write_tree(small, specs, 5)
        check_dir = workdir / "pods-check"
        check_records = write_tree(check_dir, specs, 1000)
        total_lines = args.lines // len(specs) * len(specs)
        raw_bytes = sum(p.stat().st_size for p in big.rglob("*.log"))
        emulator = start_cluster(workdir, specs)
        print(check_output(workdir, check_dir, emulator.kubeconfig, specs, check_records), file=sys.stderr)

        rows = []
        agent, startup, baseline, other = [], [], [], []
        for i in range(args.runs):
            # interleaved, so drift of the machine's speed hits all three alike
            startup.append(run_agent(workdir, small, emulator.kubeconfig, f"startup{i}"))
            agent.append(run_agent(workdir, big, emulator.kubeconfig, f"run{i}"))
            baseline.append(run_baseline(big))
            if args.compare_with:
                other.append(run_agent(workdir, big, emulator.kubeconfig, f"other{i}", code=args.compare_with))
                rows.append([i + 1, f"agent of {args.compare_with}", other[-1].wall, other[-1].cpu])
            for name, m in (("agent start-up", startup[-1]), ("agent", agent[-1]), ("baseline loop", baseline[-1])):
                rows.append([i + 1, name, m.wall, m.cpu])
            print(f"run {i + 1}: agent {agent[-1].wall:.2f}s wall {agent[-1].cpu:.2f}s cpu, "
                  f"baseline {baseline[-1].wall:.2f}s", file=sys.stderr)
        if args.profile:
            run_agent(workdir, big, emulator.kubeconfig, "profile", profile=args.profile)
            print(f"profile written to {args.profile}", file=sys.stderr)
    finally:
        if emulator is not None:
            emulator.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"work directory kept: {workdir}", file=sys.stderr)

    wall_a, cpu_a = median([m.wall for m in agent]), median([m.cpu for m in agent])
    wall_s, cpu_s = median([m.wall for m in startup]), median([m.cpu for m in startup])
    wall_b, cpu_b = median([m.wall for m in baseline]), median([m.cpu for m in baseline])
    steady_wall, steady_cpu = max(wall_a - wall_s, 1e-9), max(cpu_a - cpu_s, 1e-9)
    print(f"## Throughput: {total_lines:,} CRI lines ({raw_bytes / 1e6:.0f} MB) over {len(specs)} files; "
          f"enrichment + filter + route + console to /dev/null\n")
    print(table(["run", "process", "wall s", "CPU s"], rows))
    print()
    summary = [
        ["agent, total (incl. start-up)", total_lines / wall_a, total_lines / cpu_a],
        ["agent, steady state (start-up run subtracted)", total_lines / steady_wall, total_lines / steady_cpu],
        ["baseline loop (read + split + msgspec encode)", total_lines / wall_b, total_lines / cpu_b],
    ]
    print(table(["medians of %d runs" % args.runs, "lines/s (wall)", "lines/CPU-s"], summary))
    print()
    ratio = (total_lines / steady_cpu) / (total_lines / cpu_b)
    ratio_wall = (total_lines / steady_wall) / (total_lines / wall_b)
    per_cpu = total_lines / steady_cpu
    targets = [
        ["steady lines per CPU-second", f"{per_cpu:,.0f}", ">= 500,000", "met" if per_cpu >= 500_000 else "MISSED"],
        ["steady / baseline (per CPU-s)", f"{ratio:.2f}", ">= 0.6", "met" if ratio >= 0.6 else "MISSED"],
        ["steady / baseline (wall)", f"{ratio_wall:.2f}", "(info)", ""],
        ["agent start-up (wall / CPU s)", f"{wall_s:.2f} / {cpu_s:.2f}", "(info)", ""],
    ]
    print(table(["target", "measured", "goal", ""], targets))
    if other:
        print()
        print(table([f"this checkout / {args.compare_with} (median of per-run ratios)", "throughput ratio"], [
            ["wall", f"{median([o.wall / a.wall for a, o in zip(agent, other)]):.3f}"],
            ["CPU", f"{median([o.cpu / a.cpu for a, o in zip(agent, other)]):.3f}"],
        ]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
