"""HTTP receivers of the shipping benchmarks, each in its own process on 127.0.0.1.

``receivers.ndjson`` (ndjson, the ``http`` sink) and ``receivers.backends``
(Elasticsearch ``_bulk``, Loki push, OTLP logs) print ``records=N bytes=M``
every ``--interval`` seconds; these counts tell the benchmark that every record
arrived and how many bytes went over the wire.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import PYTHON, REPO, cpu_seconds, stop_process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ReceiverProcess:
    """``python -m <module> --port P --interval 0.2 [args]``, reporting its accepted-record count."""

    def __init__(self, workdir: Path, module: str = "receivers.ndjson", args: Sequence[str] = (),
                 name: str = "receiver") -> None:
        self.name = name
        self.port = free_port()
        self.out_path = workdir / f"{name.replace(' ', '-')}.out"
        self._out = open(self.out_path, "wb")
        self.proc = subprocess.Popen([PYTHON, "-m", module, "--port", str(self.port), "--interval", "0.2", *args],
                                     cwd=REPO, stdout=self._out, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while b"listening on" not in self.out_path.read_bytes():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"the {name} did not start")
            time.sleep(0.05)
        self.base = f"http://127.0.0.1:{self.port}"
        #: where the ``http`` sink posts to ``receivers.ndjson``
        self.uri = f"{self.base}/logs"

    def _last(self, key: bytes) -> int:
        counts = re.findall(key + rb"=(\d+)", self.out_path.read_bytes())
        return int(counts[-1]) if counts else 0

    def records(self) -> int:
        return self._last(b"records")

    def bytes(self) -> int:
        return self._last(b"bytes")

    def cpu(self) -> float:
        """The receiver process's utime+stime so far, in seconds."""
        return cpu_seconds(self.proc.pid)

    def wait_for(self, total: int, timeout: float = 10.0) -> int:
        """Wait until the receiver counted ``total`` records (or ``timeout``); returns its count."""
        deadline = time.monotonic() + timeout
        while (seen := self.records()) < total and time.monotonic() < deadline:
            time.sleep(0.1)
        return seen

    def stop(self) -> None:
        stop_process(self.proc, timeout=10)
        self._out.close()
