"""Rename rotation (kubelet/CRI style) at a high rate, rotated files gzipped later:
every line must arrive exactly once."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from logagent.files import CheckpointStore, FileTailer
from tests.logwriter import LogWriter
from tests.test_files_tailer import WAIT, Collector, make_config

LINES = 60_000
LINE_BYTES = 120  # ~7 MB in total, ~28 rotations per writer at 256 KiB
BYTES_PER_SEC = 2 << 20


def identity(path: str) -> str:
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}"


def write_with_rotation(writers: list[LogWriter], done: threading.Event, tailer: FileTailer) -> None:
    """Write at BYTES_PER_SEC, but rotate a file only once the tailer has it open.

    A file renamed away before it was ever opened is out of reach of a
    ``*.log`` include (as for Vector or Fluent Bit): how far a loaded machine
    lets the tailer fall behind is not what this test checks, so the writer
    waits for the condition instead of racing it.
    """
    started = time.monotonic()
    written = 0
    batch = 20
    while any(w.seq < LINES for w in writers):
        for w in writers:
            n = min(batch, LINES - w.seq)
            if n and w.full():
                current = identity(w.path)
                deadline = time.monotonic() + 60
                while not any(f.identity == current for f in tailer.files()) and time.monotonic() < deadline:
                    time.sleep(0.005)
            if n:
                w.write(n)
                written += n * LINE_BYTES
        ahead = written / BYTES_PER_SEC - (time.monotonic() - started)
        if ahead > 0:
            time.sleep(ahead)
    done.set()


@pytest.mark.parametrize("include", [["**/*"], ["**/*.log"]], ids=["rotated-names-included", "only-dot-log"])
async def test_fast_rename_rotation_loses_and_duplicates_nothing(tmp_path: Path, include: list[str]) -> None:
    logs = tmp_path / "pods"
    writers = [
        LogWriter(logs, "ns", f"p{i}", f"u{i}", line_bytes=LINE_BYTES, rotate_bytes=256 << 10, gzip_rotated=True)
        for i in range(2)
    ]
    store = CheckpointStore(tmp_path / "data")
    config = make_config(logs, include_paths_glob_patterns=include, max_read_bytes=128 << 10)
    tailer = FileTailer(config, store, "src")
    collector = Collector()
    done = threading.Event()
    task = asyncio.create_task(tailer.run(collector))
    thread = threading.Thread(target=write_with_rotation, args=(writers, done, tailer), daemon=True)
    try:
        await asyncio.sleep(0.2)
        thread.start()
        await collector.wait_for(done.is_set, "the writers", timeout=300)
        await collector.wait_for(lambda: collector.tracker.distinct() >= LINES * len(writers), "every line",
                                 timeout=120)
        # rotated files are drained and closed; only the current files stay open
        await collector.wait_for(lambda: tailer.files_open <= 2 * len(writers), "rotated files to close")
    finally:
        tailer.stop()
        await asyncio.wait_for(task, WAIT)
        thread.join(WAIT)
        for w in writers:
            w.close()
    assert all(w.rotations >= 20 for w in writers)
    assert collector.tracker.missing({w.source: LINES for w in writers}) == {}
    assert collector.tracker.duplicates() == {}
    assert list(logs.glob("**/*.gz")), "rotated files were compressed"
