"""Run the agent as a real process for tests: configs, start, signals, output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from tests.logwriter import SeqTracker

REPO = Path(__file__).resolve().parent.parent

EMPTY_SNAPSHOT = '{"apiVersion": "v1", "kind": "List", "items": []}'


def offline_config(root: Path, log_dir: Path, *, sink: str | None = None, extra: str = "") -> Path:
    """A config with no cluster (an empty snapshot) and a console sink."""
    snapshot = root / "empty-cluster.json"
    snapshot.write_text(EMPTY_SNAPSHOT)
    path = root / "agent.yaml"
    path.write_text(
        f"data_dir: {root / 'data'}\n"
        "api: {enabled: false}\n"
        "shutdown_grace_secs: 10\n"
        f"kubernetes: {{node_name: test-node, snapshot: {snapshot}}}\n"
        "sources:\n"
        "  pods:\n"
        "    type: kubernetes_logs\n"
        f"    log_dir: {log_dir}\n"
        "    insert_node_fields: false\n"
        "    rescan_interval_secs: 1\n"
        f"{extra}"
        "sinks:\n"
        + (sink or "  out: {type: console, inputs: [pods]}\n")
    )
    return path


class AgentProcess:
    """``logagent run`` in a child process; stdout goes where the caller says."""

    def __init__(
        self,
        config: Path,
        stdout: IO[bytes] | int,
        *,
        once: bool = False,
        stderr_path: Path | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        args = [sys.executable, "-m", "logagent", "run", "--config", str(config), *(extra_args or [])]
        if once:
            args.append("--once")
        self.stderr_path = stderr_path or config.with_name(f"agent-{time.monotonic_ns()}.stderr")
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(args, stdout=stdout, stderr=self._stderr, cwd=REPO)
        self._stdout = stdout
        #: bytes of a record the last kill -9 cut short in the output file (removed)
        self.torn_bytes = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_events(self) -> list[dict]:
        events = []
        for line in self.stderr_path.read_text(errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                events.append({"event": "unparsed", "line": line})
        return events

    def wait_for_log(self, event: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e.get("event") == event for e in self.log_events()):
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"agent exited with {self.proc.returncode}: {self.stderr_path.read_text()[-2000:]}")
            time.sleep(0.05)
        raise AssertionError(f"agent did not log {event!r} within {timeout}s")

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._stderr.close()
        self.torn_bytes = drop_torn_record(self._stdout)


    def wait(self, timeout: float = 60.0) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self._stderr.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._stderr.close()


def drop_torn_record(stdout: IO[bytes] | int) -> int:
    """Cut a record a kill -9 left half-written at the end of an output file; returns its length.

    Linux stops a large write to a regular file at a page boundary when a
    fatal signal arrives, so the killed agent's last record can end mid-way.
    It was never acknowledged (the console sink acknowledges after the write
    returns), so the next agent writes it again whole; the fragment is not a
    record, and the next agent's output must not be glued to it.
    """
    if isinstance(stdout, int) or not hasattr(stdout, "fileno"):
        return 0
    fd = stdout.fileno()
    path = f"/proc/self/fd/{fd}"
    if not os.path.isfile(path):
        return 0
    with open(path, "rb") as output:  # the test's handle may be write-only
        size = output.seek(0, os.SEEK_END)
        window = min(size, 1 << 20)
        output.seek(size - window)
        tail = output.read(window)
    if not tail or tail.endswith(b"\n"):
        return 0
    cut = size - window + tail.rfind(b"\n") + 1
    os.ftruncate(fd, cut)
    os.lseek(fd, cut, os.SEEK_SET)  # shared with the next child when not opened for append
    return size - cut


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def complete_lines(output: bytes) -> list[bytes]:
    """The complete lines of output a running agent is writing: what follows the last newline is left out.

    The agent may be half-way through writing a record (a large write lands
    in pieces), so a test that reads its output while it runs must only look
    at lines that end in a newline; empty lines are left out too.
    """
    return [line for line in output[: output.rfind(b"\n") + 1].split(b"\n") if line.strip()]


def read_complete_lines(path: Path) -> list[bytes]:
    """``complete_lines`` of a file (none when it does not exist yet)."""
    try:
        return complete_lines(path.read_bytes())
    except FileNotFoundError:
        return []


def read_records(path: Path) -> list[dict]:
    """The JSON records of the complete lines of an output file a running agent writes."""
    return [json.loads(line) for line in read_complete_lines(path)]


def messages(output: bytes) -> list[str]:
    """The ``message`` of each JSON record the console sink wrote."""
    return [json.loads(line)["message"] for line in output.splitlines() if line.strip()]


def seq_lines(output: bytes) -> list[bytes]:
    """The console records' messages in the form tests.logwriter.parse_line reads."""
    return [b"ts stdout F " + m.encode() for m in messages(output)]


def wait_until_delivered(out_path: Path, expected: dict[str, int], agent: AgentProcess, timeout: float = 120.0) -> None:
    """Wait (on the condition, not a clock) until the output's complete lines hold every expected line."""
    tracker = SeqTracker()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tracker = SeqTracker()
        tracker.add_all(seq_lines(b"\n".join(read_complete_lines(out_path))))
        if tracker.missing(expected) == {}:
            return
        assert agent.proc.poll() is None, agent.stderr_path.read_text()[-2000:]
        time.sleep(0.1)
    raise AssertionError(f"not delivered within {timeout}s: {tracker.missing(expected)}")


def env_without(*names: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}
