"""Shared helpers of the benchmarks: processes, /proc readings, emulator control, tables.

Everything here runs in the benchmark driver. The apiserver emulator, the agent
and the naive baseline each run in their own process, so that each one's memory
and CPU can be read from /proc without counting the others.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MIB = 1024 * 1024
#: after an agent synced and its CPU went quiet, wait this long before reading its memory
SETTLE_SECS = 2.0


# --- /proc readings ---------------------------------------------------------


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM (peak RSS) and the other Vm* lines of /proc/PID/status, in KiB."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Vm") or line.startswith("Rss"):
                key, _, value = line.partition(":")
                out[key] = int(value.split()[0])
    return out


def read_memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in bytes."""
    mem = memory_kib(pid)
    return mem["VmRSS"] * 1024, mem["VmHWM"] * 1024


def rss_bytes(pid: int) -> int:
    return memory_kib(pid)["VmRSS"] * 1024


def hwm_bytes(pid: int) -> int:
    return memory_kib(pid)["VmHWM"] * 1024


def reset_peak(pid: int) -> bool:
    """Reset VmHWM to the current RSS (``echo 5 > clear_refs``); False if not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (fields 14 and 15 of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2:].split()  # the comm field may hold spaces
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def wait_cpu_quiet(pid: int, window: float = 0.5, threshold: float = 0.02, timeout: float = 120.0) -> float:
    """Wait until the process used less than ``threshold`` CPU seconds in ``window``; returns seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        before = cpu_seconds(pid)
        time.sleep(window)
        if cpu_seconds(pid) - before < threshold:
            return time.monotonic() - start
    raise TimeoutError(f"process {pid} stayed busy for {timeout}s")


class PeakSampler:
    """Samples VmRSS every few ms in the caller's loop: a fallback when clear_refs is refused."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0

    def sample(self) -> None:
        try:
            self.peak = max(self.peak, rss_bytes(self.pid))
        except FileNotFoundError:
            pass


# --- statistics and output -----------------------------------------------------


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def mib(nbytes: float) -> str:
    return f"{nbytes / MIB:.1f}"


def median_field(name: str) -> property:
    """A property: the median of attribute ``name`` over ``self.runs``."""
    return property(lambda self: median(getattr(run, name) for run in self.runs))


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if value < 10 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], cell: Callable[[Any], str] = str) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """``markdown_table`` with numbers formatted: ints with separators, floats to 3 places below 10."""
    return markdown_table(headers, rows, _number)


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def machine_line() -> str:
    return f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), Python {sys.version.split()[0]}"


def argument_parser(command: str, doc: str | None) -> argparse.ArgumentParser:
    """The options parser of ``python -m benchmarks <command>``, its help the module's docstring."""
    return argparse.ArgumentParser(prog=f"python -m benchmarks {command}", description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- the apiserver emulator in a subprocess ------------------------------------


class Emulator:
    """``python -m apiserver_emulator`` in its own process, driven through /_emulator/."""

    def __init__(self, workdir: Path, *, token: str = "bench-token", bookmark_interval: float = 60.0,
                 history_size: int = 10_000) -> None:
        self.kubeconfig = workdir / "kubeconfig"
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "apiserver_emulator", "--port", "0", "--token", token, "--kubeconfig", str(self.kubeconfig),
             "--bookmark-interval", str(bookmark_interval), "--history-size", str(history_size)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=open(workdir / "emulator.stderr", "wb"),
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("http"):
            self.stop()
            raise RuntimeError(f"the emulator did not start (first line {line!r}); see {workdir / 'emulator.stderr'}")
        self.url = line
        parts = urlsplit(line)
        self._conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=600)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        payload = None if body is None else json.dumps(body).encode()
        for attempt in range(2):
            try:
                self._conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
                response = self._conn.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                if attempt:
                    raise
                self._conn.close()  # reconnects on the next request
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {response.status}: {data[:500]!r}")
        return json.loads(data) if data else None

    def stats(self) -> dict[str, Any]:
        return self.call("GET", "/_emulator/stats")

    def reset_stats(self) -> None:
        self.call("POST", "/_emulator/reset_stats", {})

    def create(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace; returns the stored object (with its resourceVersion)."""
        return self.call("POST", f"/_emulator/objects/{resource}", obj)

    def seed_namespaces(self, count: int, start: int = 0) -> None:
        if count > 0:
            self.call("POST", "/_emulator/seed", {"namespaces": count, "start": start})

    def compact(self) -> int:
        return self.call("POST", "/_emulator/compact", {})["resourceVersion"]

    def drop_watches(self, resource: str | None = None) -> int:
        return self.call("POST", "/_emulator/drop_watches", {"resource": resource} if resource else {})["dropped"]

    def rss(self) -> int:
        return rss_bytes(self.proc.pid)

    def stop(self) -> None:
        stop_process(self.proc)

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def requests_by(stats: dict[str, Any], resource: str) -> dict[str, int]:
    """``{"list": n, "watch": n, ...}`` of one resource from an emulator stats answer."""
    out: dict[str, int] = {}
    for key, n in stats["requests"].items():
        verb, _, res = key.partition("/")
        if res == resource:
            out[verb] = out.get(verb, 0) + n
    return out


def initial_state_requests(stats: dict[str, Any], resource: str) -> int:
    """Lists plus streaming watch-lists (``sendInitialEvents=true``) of a resource, from the request log."""
    n = 0
    for rec in stats["log"]:
        if rec["resource"] != resource:
            continue
        if rec["verb"] == "list" or rec["query"].get("sendInitialEvents") == "true":
            n += 1
    return n


# --- the agent in a subprocess --------------------------------------------------


def agent_config(root: Path, kubeconfig: Path, node: str, namespace_flags: Sequence[bool],
                 kube_extra: Mapping[str, object] | None = None) -> Path:
    """A config with one kubernetes_logs source per flag (over an empty log dir) and a console sink.

    ``kube_extra``: more ``kubernetes`` settings (they may override ``initial_delay_ms: 0``).
    """
    log_dir = root / "pods"
    log_dir.mkdir(parents=True, exist_ok=True)
    sources = "".join(
        f"  s{i}:\n    type: kubernetes_logs\n    log_dir: {log_dir}\n"
        f"    insert_namespace_fields: {str(flag).lower()}\n    insert_node_fields: false\n"
        for i, flag in enumerate(namespace_flags)
    )
    inputs = ", ".join(f"s{i}" for i in range(len(namespace_flags)))
    kube: dict[str, object] = {"node_name": node, "kubeconfig": str(kubeconfig), "initial_delay_ms": 0}
    kube.update(kube_extra or {})
    path = root / "agent.yaml"
    path.write_text(
        f"data_dir: {root / 'data'}\n"
        "api: {enabled: false}\n"
        f"kubernetes: {{{', '.join(f'{k}: {v}' for k, v in kube.items())}}}\n"
        f"sources:\n{sources}"
        f"sinks:\n  out: {{type: console, inputs: [{inputs}]}}\n"
    )
    return path


class Process:
    """A child process whose stderr goes to a file, with a wait-for-line helper."""

    def __init__(self, args: list[str], stderr_path: Path, stdout: IO[bytes] | int = subprocess.DEVNULL,
                 env: dict[str, str] | None = None, cwd: Path = REPO) -> None:
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(args, cwd=cwd, stdout=stdout, stderr=self._stderr,
                                     env={**os.environ, **(env or {})})

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_for(self, predicate: Callable[[str], bool], timeout: float, what: str) -> float:
        """Wait for a stderr line matching ``predicate``; returns seconds since start."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            text = self.stderr_path.read_text(errors="replace")
            for line in text[seen:].splitlines(keepends=True):
                if not line.endswith("\n"):
                    break
                seen += len(line)
                if predicate(line):
                    return time.monotonic() - self.started
            if self.proc.poll() is not None:
                raise RuntimeError(f"{what}: process exited with {self.proc.returncode}: {text[-2000:]}")
            time.sleep(0.02)
        raise TimeoutError(f"{what} not seen within {timeout}s; stderr tail: {self.stderr_path.read_text()[-1000:]}")

    def stop(self) -> None:
        stop_process(self.proc)
        self._stderr.close()


def start_agent(config: Path, stderr_path: Path, env: dict[str, str] | None = None, cwd: Path = REPO) -> Process:
    """The agent of the repository at ``cwd`` (``python -m`` imports the package from there)."""
    return Process([PYTHON, "-m", "logagent", "run", "--config", str(config)], stderr_path, env=env, cwd=cwd)


def wait_agent_synced(agent: Process, timeout: float = 300.0) -> float:
    return agent.wait_for(lambda line: '"metadata synced"' in line, timeout, "agent 'metadata synced'")


def settle(pid: int) -> None:
    """Wait for the process's CPU to go quiet, then ``SETTLE_SECS`` more (before reading its memory)."""
    wait_cpu_quiet(pid)
    time.sleep(SETTLE_SECS)


def start_settled_agent(config: Path, stderr_path: Path, cwd: Path = REPO) -> tuple[Process, float]:
    """The agent, once synced and settled; and the seconds it took to sync."""
    agent = start_agent(config, stderr_path, cwd=cwd)
    try:
        synced = wait_agent_synced(agent)
        settle(agent.pid)
    except BaseException:
        agent.stop()
        raise
    return agent, synced


class RunDirs:
    """A fresh numbered directory per run under ``root`` (run-001, run-002, ...)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0

    def next(self) -> Path:
        self.count += 1
        directory = self.root / f"run-{self.count:03d}"
        directory.mkdir()
        return directory


def checkpoints_saved(stderr_path: Path) -> dict[str, Any]:
    """The agent's "checkpoints saved" log line at shutdown (writes, syncs, persist lag), or {}."""
    for line in stderr_path.read_text(errors="replace").splitlines():
        if '"checkpoints saved"' in line:
            return json.loads(line)
    return {}


def stop_process(proc: subprocess.Popen[Any], timeout: float = 20.0) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
