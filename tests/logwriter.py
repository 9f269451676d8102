"""Write CRI-format, sequence-numbered log lines into a kubelet-style pods tree.

Each line is ``<RFC3339Nano> stdout F <source> <seq> <padding>`` where
``source`` names the writer (``<namespace>/<pod>/<container>``) and ``seq``
counts from 0 without gaps, so a reader can count lost and duplicated lines
exactly (:func:`parse_line`, :class:`SeqTracker`).

Rotation mimics kubelet: the current ``0.log`` is renamed to
``0.log.<YYYYmmdd-HHMMSS.ffffff>`` and a new ``0.log`` is opened; with
``gzip_rotated`` every rotated file but the newest is compressed through a
``.tmp`` file into ``.gz`` and the uncompressed one is deleted.

CLI (for process-level tests)::

    python -m tests.logwriter --root /tmp/pods --pods 10 --rate 1000 --count 100000 \
        --rotate-bytes 262144 --gzip
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import os
import shutil
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field


def pod_dir_name(namespace: str, pod: str, uid: str) -> str:
    return f"{namespace}_{pod}_{uid}"


def format_line(source: str, seq: int, line_bytes: int = 0, stream: str = "stdout") -> bytes:
    """One CRI line with its newline, padded with "x" to about ``line_bytes``."""
    now = dt.datetime.now(dt.timezone.utc)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond:06d}000Z"
    body = f"{stamp} {stream} F {source} {seq:010d}"
    pad = line_bytes - len(body) - 2
    if pad > 0:
        body += " " + "x" * pad
    return (body + "\n").encode()


def parse_line(line: bytes) -> tuple[str, int]:
    """(source, seq) of a line written by :func:`format_line` (without its newline)."""
    parts = line.split(b" ", 5)
    return parts[3].decode(), int(parts[4])


@dataclass
class SeqTracker:
    """Counts, per source, which sequence numbers were seen and how often."""

    seen: dict[str, dict[int, int]] = field(default_factory=dict)

    def add(self, line: bytes) -> None:
        source, seq = parse_line(line)
        counts = self.seen.setdefault(source, {})
        counts[seq] = counts.get(seq, 0) + 1

    def add_all(self, lines: Iterable[bytes]) -> None:
        for line in lines:
            self.add(line)

    def total(self) -> int:
        return sum(sum(c.values()) for c in self.seen.values())

    def distinct(self) -> int:
        return sum(len(c) for c in self.seen.values())

    def missing(self, expected: dict[str, int]) -> dict[str, list[int]]:
        """Per source, the sequence numbers below ``expected[source]`` never seen."""
        out = {}
        for source, count in expected.items():
            got = self.seen.get(source, {})
            lost = [i for i in range(count) if i not in got]
            if lost:
                out[source] = lost
        return out

    def duplicates(self) -> dict[str, list[int]]:
        return {s: [i for i, n in c.items() if n > 1] for s, c in self.seen.items() if any(n > 1 for n in c.values())}


class LogWriter:
    """Appends sequence-numbered lines to ``<root>/<ns>_<pod>_<uid>/<container>/0.log``."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        namespace: str = "default",
        pod: str = "pod",
        uid: str = "00000000-0000-0000-0000-000000000000",
        container: str = "app",
        *,
        file_name: str = "0.log",
        line_bytes: int = 0,
        rotate_bytes: int | None = None,
        gzip_rotated: bool = False,
        max_rotated: int | None = None,
    ) -> None:
        self.dir = os.path.join(os.fspath(root), pod_dir_name(namespace, pod, uid), container)
        os.makedirs(self.dir, exist_ok=True)
        self.path = os.path.join(self.dir, file_name)
        self.source = f"{namespace}/{pod}/{container}"
        self.line_bytes = line_bytes
        self.rotate_bytes = rotate_bytes
        self.gzip_rotated = gzip_rotated
        self.max_rotated = max_rotated
        self.seq = 0
        self.rotations = 0
        self._rotated: list[str] = []
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = os.fstat(self._fd).st_size

    def full(self) -> bool:
        """Whether the next ``write`` rotates first."""
        return self.rotate_bytes is not None and self._size >= self.rotate_bytes

    def write(self, n: int = 1) -> None:
        """Append ``n`` lines in one write (rotating first if the file is full)."""
        if self.rotate_bytes is not None and self._size >= self.rotate_bytes:
            self.rotate()
        data = b"".join(format_line(self.source, self.seq + i, self.line_bytes) for i in range(n))
        self.seq += n
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        self._size += len(data)

    def rotate(self) -> None:
        """kubelet-style: rename the current file, reopen, compress older rotated files."""
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S.%f")
        rotated = f"{self.path}.{stamp}"
        while os.path.exists(rotated):
            rotated += "0"
        os.rename(self.path, rotated)
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = 0
        self.rotations += 1
        self._rotated.append(rotated)
        if self.gzip_rotated:
            for index, older in enumerate(self._rotated[:-1]):
                if not older.endswith(".gz"):
                    self._compress(older)
                    self._rotated[index] = older + ".gz"
        if self.max_rotated is not None:
            while len(self._rotated) > self.max_rotated:
                victim = self._rotated.pop(0)
                try:
                    os.unlink(victim)
                except FileNotFoundError:
                    pass

    @staticmethod
    def _compress(path: str) -> None:
        tmp = path + ".tmp"
        with open(path, "rb") as src, gzip.open(tmp, "wb", compresslevel=1) as dst:
            shutil.copyfileobj(src, dst)
        os.rename(tmp, path + ".gz")
        os.unlink(path)

    def close(self) -> None:
        os.close(self._fd)


def run(writers: list[LogWriter], *, count: int, rate: float, batch: int = 1) -> None:
    """Write ``count`` lines per writer, round-robin, at ``rate`` lines/s in total (0: flat out)."""
    total = count * len(writers)
    started = time.monotonic()
    written = 0
    while written < total:
        for w in writers:
            n = min(batch, count - w.seq)
            if n > 0:
                w.write(n)
                written += n
        if rate > 0:
            ahead = written / rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.logwriter", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="the pods tree (like /var/log/pods)")
    parser.add_argument("--pods", type=int, default=1)
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--container", default="app")
    parser.add_argument("--count", type=int, default=1000, help="lines per pod")
    parser.add_argument("--rate", type=float, default=0, help="lines per second in total (0: as fast as possible)")
    parser.add_argument("--batch", type=int, default=1, help="lines per write() call")
    parser.add_argument("--line-bytes", type=int, default=0, help="pad lines to about this size")
    parser.add_argument("--rotate-bytes", type=int, default=None)
    parser.add_argument("--gzip", action="store_true", help="compress rotated files (all but the newest)")
    parser.add_argument("--max-rotated", type=int, default=None)
    args = parser.parse_args(argv)
    writers = [
        LogWriter(args.root, args.namespace, f"pod-{i}", f"uid-{i:04d}", args.container,
                  line_bytes=args.line_bytes, rotate_bytes=args.rotate_bytes, gzip_rotated=args.gzip,
                  max_rotated=args.max_rotated)
        for i in range(args.pods)
    ]
    try:
        run(writers, count=args.count, rate=args.rate, batch=args.batch)
    finally:
        for w in writers:
            w.close()
    print(f"wrote {args.count} lines to each of {len(writers)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
