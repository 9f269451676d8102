"""FileTailer against real files: discovery, partial lines, long lines, resume, read_from,
ignore_older_secs, fairness, backpressure, copy-truncate, deletion, once mode."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from logagent.acks import ACK_WAITS
from logagent.files import Checkpoint, CheckpointStore, Chunk, FileTailer, TailerConfig
from tests.logwriter import LogWriter, SeqTracker, format_line

WAIT = 15.0  # upper bound for any single wait in these tests


class Collector:
    """An ``emit`` that records chunks and counts sequence numbers."""

    def __init__(self, auto_ack: bool = True, parse: bool = True) -> None:
        self.auto_ack = auto_ack
        self.parse = parse
        self.chunks: list[Chunk] = []
        self.tracker = SeqTracker()
        self.lines = 0
        self._changed = asyncio.Event()

    async def __call__(self, chunk: Chunk) -> None:
        self.chunks.append(chunk)
        self.lines += len(chunk.lines)
        if self.parse and not chunk.eof:  # an eof chunk may carry an unterminated fragment
            self.tracker.add_all(chunk.lines)
        if self.auto_ack:
            chunk.ack.release()
        self._changed.set()

    def eofs(self) -> list[Chunk]:
        return [c for c in self.chunks if c.eof]

    async def wait_for(self, predicate: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}")
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 0.1))


def make_config(log_dir: Path, **overrides) -> TailerConfig:
    settings = dict(log_dir=str(log_dir), rescan_interval_secs=1.0, gone_close_grace_secs=0.2)
    settings.update(overrides)
    return TailerConfig(**settings)


@contextlib.asynccontextmanager
async def running(tailer: FileTailer, emit: Collector) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(tailer.run(emit))
    try:
        yield task
    finally:
        tailer.stop()
        await asyncio.wait_for(task, WAIT)


def write_lines(path: Path, source: str, start: int, n: int, line_bytes: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        fh.write(b"".join(format_line(source, start + i, line_bytes) for i in range(n)))


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "data")


async def test_reads_existing_and_discovers_new_dirs_and_files(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    first = logs / "ns1_web_uid-1" / "app" / "0.log"
    write_lines(first, "a", 0, 10)
    collector = Collector()
    tailer = FileTailer(make_config(logs, rescan_interval_secs=60.0), store, "src")
    async with running(tailer, collector):
        await collector.wait_for(lambda: collector.lines == 10, "existing file")
        # a new pod dir, container dir and file appear while running (notification path)
        second = logs / "ns2_db_uid-2" / "main" / "0.log"
        write_lines(second, "b", 0, 5)
        await collector.wait_for(lambda: collector.lines == 15, "new pod's file")
        write_lines(first, "a", 10, 3)
        write_lines(second, "b", 5, 3)
        await collector.wait_for(lambda: collector.lines == 21, "appended lines")
        # excluded by the default patterns
        (logs / "ns1_web_uid-1" / "app" / "0.log.20260101-000000.gz").write_bytes(b"zzz\n")
        (logs / "ns1_web_uid-1" / "app" / "1.log.tmp").write_bytes(b"zzz\n")
    assert collector.tracker.missing({"a": 13, "b": 8}) == {}
    assert collector.tracker.duplicates() == {}
    assert collector.tracker.total() == 21
    files = {c.file.path: c.file for c in collector.chunks}
    f = files[str(second)]
    assert (f.pod_dir, f.namespace, f.pod_name, f.pod_uid, f.container) == ("ns2_db_uid-2", "ns2", "db", "uid-2", "main")


async def test_poke_finds_pod_dir_without_notifications(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    logs.mkdir()
    collector = Collector()
    tailer = FileTailer(make_config(logs, rescan_interval_secs=3600.0), store, "src")
    tailer._on_changes = lambda changes: None  # type: ignore[method-assign]  # notifications lost
    async with running(tailer, collector):
        await asyncio.sleep(0.1)
        write_lines(logs / "ns_p_u" / "c" / "0.log", "p", 0, 4)
        tailer.poke("ns_p_u")
        await collector.wait_for(lambda: collector.lines == 4, "poked pod dir")


async def test_odd_directory_names_are_read_with_none_fields(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    write_lines(logs / "not-a-pod-dir" / "c" / "0.log", "x", 0, 2)
    collector = Collector()
    await asyncio.wait_for(FileTailer(make_config(logs), store, "src").run(collector, once=True), WAIT)
    assert collector.lines == 2
    f = collector.chunks[0].file
    assert (f.pod_dir, f.namespace, f.pod_name, f.pod_uid, f.container) == ("not-a-pod-dir", None, None, None, "c")


async def test_partial_last_line_is_kept_until_its_newline(tmp_path: Path, store: CheckpointStore) -> None:
    path = tmp_path / "pods" / "ns_p_u" / "c" / "0.log"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"one\ntw")
    collector = Collector(parse=False)
    tailer = FileTailer(make_config(tmp_path / "pods"), store, "src")
    async with running(tailer, collector):
        await collector.wait_for(lambda: collector.lines == 1, "first line")
        with open(path, "ab") as fh:
            fh.write(b"o\nthr")
        await collector.wait_for(lambda: collector.lines == 2, "second line")
        with open(path, "ab") as fh:
            fh.write(b"ee\n")
        await collector.wait_for(lambda: collector.lines == 3, "third line")
        await collector.wait_for(lambda: store.get("src", collector.chunks[0].file.identity).offset == 14,
                                 "checkpoint at the end")
    assert [line for c in collector.chunks for line in c.lines] == [b"one", b"two", b"three"]
    assert [c.end_offset for c in collector.chunks] == [4, 8, 14]


async def test_ten_mib_line_is_cut_and_the_rest_skipped(tmp_path: Path, store: CheckpointStore) -> None:
    path = tmp_path / "pods" / "ns_p_u" / "c" / "0.log"
    path.parent.mkdir(parents=True)
    big = b"B" * (10 << 20)
    path.write_bytes(b"before\n" + big + b"\nafter\n")
    collector = Collector(parse=False)
    tailer = FileTailer(make_config(tmp_path / "pods", max_line_bytes=1000, max_read_bytes=64 << 10), store, "src")
    await asyncio.wait_for(tailer.run(collector, once=True), WAIT)
    lines = [line for c in collector.chunks for line in c.lines]
    assert lines == [b"before", b"B" * 1000, b"after"]
    truncated = [(c.lines[i], c) for c in collector.chunks for i in (c.truncated or ())]
    assert [line for line, _ in truncated] == [b"B" * 1000]
    assert tailer.lines_truncated == 1
    # nothing near the size of the line was ever held: every chunk is small
    assert max(sum(map(len, c.lines)) for c in collector.chunks) <= 64 << 10
    assert store.get("src", collector.chunks[0].file.identity).offset == path.stat().st_size


async def test_restart_inside_a_cut_line_does_not_emit_its_tail(tmp_path: Path, store: CheckpointStore) -> None:
    path = tmp_path / "pods" / "ns_p_u" / "c" / "0.log"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"C" * 5000)  # no newline yet
    config = make_config(tmp_path / "pods", max_line_bytes=100)
    first = Collector(parse=False)
    await asyncio.wait_for(FileTailer(config, store, "src").run(first, once=True), WAIT)
    assert [line for c in first.chunks for line in c.lines] == [b"C" * 100]
    with open(path, "ab") as fh:
        fh.write(b"CCC\nnext\n")
    second = Collector(parse=False)
    await asyncio.wait_for(FileTailer(config, CheckpointStore(tmp_path / "data"), "src").run(second, once=True), WAIT)
    assert [line for c in second.chunks for line in c.lines] == [b"next"]


async def test_restart_resumes_from_checkpoint_duplicating_only_unacked(tmp_path: Path) -> None:
    logs = tmp_path / "pods"
    path = logs / "ns_p_u" / "c" / "0.log"
    write_lines(path, "s", 0, 3000, line_bytes=100)
    config = make_config(logs, max_read_bytes=16 << 10)
    store1 = CheckpointStore(tmp_path / "data")
    held = Collector(auto_ack=False)
    tailer = FileTailer(config, store1, "src")
    async with running(tailer, held):
        await held.wait_for(lambda: held.lines == 3000, "all lines")
        # acknowledge only the first third of the chunks, then "crash"
        acked = held.chunks[: len(held.chunks) // 3]
        for chunk in acked:
            chunk.ack.release()
        await asyncio.sleep(0)
    store1.flush()
    acked_lines = sum(len(c.lines) for c in acked)
    assert store1.get("src", held.chunks[0].file.identity).offset == acked[-1].end_offset

    write_lines(path, "s", 3000, 500, line_bytes=100)
    store2 = CheckpointStore(tmp_path / "data")
    resumed = Collector()
    await asyncio.wait_for(FileTailer(config, store2, "src").run(resumed, once=True), WAIT)
    combined = SeqTracker()
    combined.add_all(line for c in acked for line in c.lines)
    combined.add_all(line for c in resumed.chunks for line in c.lines)
    assert combined.missing({"s": 3500}) == {}
    assert combined.duplicates() == {}  # only unacked chunks are read again, acked ones never
    assert resumed.lines == 3500 - acked_lines


async def test_checkpoint_advances_only_over_contiguous_acked_chunks(tmp_path: Path, store: CheckpointStore) -> None:
    path = tmp_path / "pods" / "ns_p_u" / "c" / "0.log"
    write_lines(path, "s", 0, 200, line_bytes=100)
    collector = Collector(auto_ack=False)
    tailer = FileTailer(make_config(tmp_path / "pods", max_read_bytes=4096), store, "src")
    async with running(tailer, collector):
        await collector.wait_for(lambda: collector.lines == 200, "all lines")
        chunks = collector.chunks
        assert len(chunks) >= 4
        identity = chunks[0].file.identity

        def offset() -> int:
            return store.get("src", identity).offset

        assert offset() == 0
        chunks[2].ack.release()
        chunks[1].ack.release()
        assert offset() == 0  # chunk 0 still pending
        chunks[0].ack.release()
        assert offset() == chunks[2].end_offset
        chunks[-1].ack.release()
        assert offset() == chunks[2].end_offset
        for chunk in chunks[3:-1]:
            chunk.ack.release()
        assert offset() == chunks[-1].end_offset == path.stat().st_size
        assert tailer.unacked_bytes == 0
        assert tailer.checkpoint_lag_bytes == 0


async def test_read_from_end_skips_existing_data_but_not_new_files(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    old = logs / "ns_old_u1" / "c" / "0.log"
    write_lines(old, "old", 0, 50)
    with open(old, "ab") as fh:
        fh.write(b"half a line")  # start-up lands inside a line: its rest is skipped
    collector = Collector()
    tailer = FileTailer(make_config(logs, read_from="end"), store, "src")
    async with running(tailer, collector):
        await asyncio.sleep(0.3)
        assert collector.lines == 0
        with open(old, "ab") as fh:
            fh.write(b" ends here\n")
        write_lines(old, "old", 50, 5)
        write_lines(logs / "ns_new_u2" / "c" / "0.log", "new", 0, 7)
        await collector.wait_for(lambda: collector.lines == 12, "new data")
    assert collector.tracker.missing({"old": 55, "new": 7}) == {"old": list(range(50))}
    assert collector.tracker.duplicates() == {}


async def test_ignore_older_secs(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    stale = logs / "ns_a_u1" / "c" / "0.log"
    fresh = logs / "ns_b_u2" / "c" / "0.log"
    write_lines(stale, "stale", 0, 20)
    write_lines(fresh, "fresh", 0, 20)
    long_ago = time.time() - 7200
    os.utime(stale, (long_ago, long_ago))
    collector = Collector()
    tailer = FileTailer(make_config(logs, ignore_older_secs=3600), store, "src")
    async with running(tailer, collector):
        await collector.wait_for(lambda: collector.lines == 20, "fresh file")
        await asyncio.sleep(0.3)
        assert collector.lines == 20
        assert tailer.files_open == 1
        write_lines(stale, "stale", 20, 3)  # written again: only the new lines are read
        await collector.wait_for(lambda: collector.lines == 23, "stale file written again")
    assert collector.tracker.missing({"stale": 23}) == {"stale": list(range(20))}
    assert collector.tracker.missing({"fresh": 20}) == {}


async def test_one_huge_file_does_not_starve_a_small_one(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    huge = logs / "ns_huge_u1" / "c" / "0.log"
    write_lines(huge, "huge", 0, 50_000, line_bytes=200)  # ~10 MB
    os.utime(huge, (time.time() - 100, time.time() - 100))  # discovered first
    write_lines(logs / "ns_small_u2" / "c" / "0.log", "small", 0, 10)
    collector = Collector()
    await asyncio.wait_for(FileTailer(make_config(logs, max_read_bytes=64 << 10), store, "src").run(
        collector, once=True), WAIT)
    order = [c.file.pod_name for c in collector.chunks if c.lines]
    assert order[0] == "huge" and order[1] == "small"  # round-robin: one turn each
    assert collector.tracker.missing({"huge": 50_000, "small": 10}) == {}


async def test_file_appearing_while_a_huge_one_is_read_is_served_soon(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    write_lines(logs / "ns_huge_u1" / "c" / "0.log", "huge", 0, 100_000, line_bytes=200)  # ~20 MB
    collector = Collector()

    async def slowish(chunk: Chunk) -> None:  # a downstream that takes 2 ms per chunk
        await asyncio.sleep(0.002)
        await collector(chunk)

    tailer = FileTailer(make_config(logs, max_read_bytes=32 << 10), store, "src")
    task = asyncio.create_task(tailer.run(slowish))
    try:
        await collector.wait_for(lambda: collector.lines > 0, "first lines")
        write_lines(logs / "ns_small_u2" / "c" / "0.log", "small", 0, 10)
        await collector.wait_for(lambda: len(collector.tracker.seen.get("small", ())) == 10, "small file")
        huge_done = len(collector.tracker.seen["huge"])
    finally:
        tailer.stop()
        await asyncio.wait_for(task, WAIT)
    assert huge_done < 100_000  # served before the huge file was finished


async def test_oldest_first_drains_the_oldest_file_first(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    older, younger = logs / "ns_a_u1" / "c" / "0.log", logs / "ns_b_u2" / "c" / "0.log"
    write_lines(older, "older", 0, 5000, line_bytes=100)
    write_lines(younger, "younger", 0, 5000, line_bytes=100)
    os.utime(older, (time.time() - 100, time.time() - 100))
    collector = Collector()
    config = make_config(logs, max_read_bytes=16 << 10, oldest_first=True)
    await asyncio.wait_for(FileTailer(config, store, "src").run(collector, once=True), WAIT)
    order = [c.file.path for c in collector.chunks if c.lines]
    first_young = order.index(str(younger))
    assert all(p == str(younger) for p in order[first_young:])
    assert collector.tracker.total() == 10_000


async def test_backpressure_pauses_reading_at_max_unacked_bytes(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    write_lines(logs / "ns_p_u" / "c" / "0.log", "s", 0, 40_000, line_bytes=100)  # ~4 MB
    limit, read_size = 256 << 10, 32 << 10
    collector = Collector(auto_ack=False)
    tailer = FileTailer(make_config(logs, max_unacked_bytes=limit, max_read_bytes=read_size), store, "src")
    async with running(tailer, collector):
        await collector.wait_for(lambda: tailer.unacked_bytes >= limit, "the budget to fill")
        await asyncio.sleep(0.3)
        emitted = sum(c.nbytes for c in collector.chunks)
        assert limit <= emitted < limit + read_size
        assert tailer.bytes_read < limit + 2 * read_size
        # batching sinks are told that nothing more comes until they deliver
        assert ACK_WAITS.waiting == 1 and tailer.backpressure_pauses == 1
        # acknowledging lets it continue, to the end
        released = 0

        def release_all() -> bool:
            nonlocal released
            for chunk in collector.chunks[released:]:
                chunk.ack.release()
            released = len(collector.chunks)
            return collector.lines == 40_000

        await collector.wait_for(release_all, "all lines after acks")
        await collector.wait_for(lambda: tailer.unacked_bytes == 0, "the last acks")
        await collector.wait_for(lambda: ACK_WAITS.waiting == 0, "reading to resume")
    assert collector.tracker.missing({"s": 40_000}) == {}
    assert ACK_WAITS.waiting == 0


async def test_copy_truncate_reads_again_from_the_start(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    path = logs / "ns_p_u" / "c" / "0.log"
    write_lines(path, "s", 0, 100)
    collector = Collector()
    tailer = FileTailer(make_config(logs), store, "src")
    async with running(tailer, collector):
        await collector.wait_for(lambda: collector.lines == 100, "first lines")
        with open(path, "r+b") as fh:  # logrotate copytruncate
            fh.truncate(0)
        write_lines(path, "s", 100, 10)  # shorter than before
        await collector.wait_for(lambda: collector.lines == 110, "lines after truncation")
        identity = collector.chunks[0].file.identity
        await collector.wait_for(lambda: store.get("src", identity).offset == path.stat().st_size, "checkpoint")
    assert collector.tracker.missing({"s": 110}) == {}
    assert collector.tracker.duplicates() == {}
    assert tailer.truncations == 1


async def test_deleted_file_is_read_to_its_end_then_closed(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    path = logs / "ns_p_u" / "c" / "0.log"
    write_lines(path, "s", 0, 1000, line_bytes=100)
    gate = asyncio.Event()
    collector = Collector()

    async def slow_emit(chunk: Chunk) -> None:
        await gate.wait()
        await collector(chunk)

    tailer = FileTailer(make_config(logs, max_read_bytes=8 << 10), store, "src")
    task = asyncio.create_task(tailer.run(slow_emit))
    try:
        await asyncio.sleep(0.2)
        write_lines(path, "s", 1000, 500, line_bytes=100)
        with open(path, "ab") as fh:
            fh.write(b"no newline at the end")
        path.unlink()
        await asyncio.sleep(0.2)
        assert tailer.files_open_deleted == 1
        gate.set()
        await collector.wait_for(lambda: bool(collector.eofs()), "eof chunk")
        await collector.wait_for(lambda: tailer.files_open == 0, "file closed")
        assert store.keys("src") == []  # checkpoint pruned once drained and acked
    finally:
        gate.set()
        tailer.stop()
        await asyncio.wait_for(task, WAIT)
    eof = collector.eofs()
    assert len(eof) == 1 and eof[0] is collector.chunks[-1]
    assert eof[0].lines == [b"no newline at the end"]
    regular = SeqTracker()
    regular.add_all(line for c in collector.chunks if not c.eof for line in c.lines)
    assert regular.missing({"s": 1500}) == {}
    assert regular.duplicates() == {}


async def test_inode_with_other_fingerprint_is_a_new_file(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    path = logs / "ns_p_u" / "c" / "0.log"
    write_lines(path, "s", 0, 30)
    st = path.stat()
    # a checkpoint left by an earlier file that had the same inode
    store.set("src", f"{st.st_dev}:{st.st_ino}", Checkpoint(offset=500, fp="0123456789abcdef", fp_len=256))
    collector = Collector()
    await asyncio.wait_for(FileTailer(make_config(logs), store, "src").run(collector, once=True), WAIT)
    assert collector.tracker.missing({"s": 30}) == {}


async def test_once_mode_returns_after_all_acked_and_writes_checkpoints(tmp_path: Path) -> None:
    logs = tmp_path / "pods"
    write_lines(logs / "ns_a_u1" / "c" / "0.log", "a", 0, 100)
    write_lines(logs / "ns_b_u2" / "c" / "0.log", "b", 0, 100)
    store = CheckpointStore(tmp_path / "data")
    pending: list[Chunk] = []

    async def emit(chunk: Chunk) -> None:
        pending.append(chunk)

    async def acker() -> None:
        while True:
            await asyncio.sleep(0.01)
            while pending:
                pending.pop().ack.release()  # out of order

    acking = asyncio.create_task(acker())
    try:
        await asyncio.wait_for(FileTailer(make_config(logs), store, "src").run(emit, once=True), WAIT)
    finally:
        acking.cancel()
    reloaded = CheckpointStore(tmp_path / "data")
    offsets = sorted(reloaded.get("src", k).offset for k in reloaded.keys("src"))
    assert offsets == [os.path.getsize(logs / "ns_a_u1" / "c" / "0.log")] * 2
    # a second once run reads nothing new
    again = Collector()
    await asyncio.wait_for(FileTailer(make_config(logs), reloaded, "src").run(again, once=True), WAIT)
    assert again.lines == 0 and len(again.eofs()) == 2


async def test_checkpoints_of_vanished_files_are_pruned_at_start(tmp_path: Path) -> None:
    logs = tmp_path / "pods"
    logs.mkdir()
    store = CheckpointStore(tmp_path / "data")
    store.set("src", "1:2", Checkpoint(offset=10, fp="x", fp_len=5))
    store.set("other", "1:2", Checkpoint(offset=10, fp="x", fp_len=5))
    await asyncio.wait_for(FileTailer(make_config(logs), store, "src").run(Collector(), once=True), WAIT)
    assert store.keys("src") == [] and store.keys("other") == ["1:2"]


async def test_writer_helper_many_files_no_loss(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    writers = [LogWriter(logs, "ns", f"p{i}", f"u{i}", line_bytes=80) for i in range(20)]
    collector = Collector()
    tailer = FileTailer(make_config(logs), store, "src")
    async with running(tailer, collector):
        for _ in range(50):
            for w in writers:
                w.write(3)
            await asyncio.sleep(0.005)
        await collector.wait_for(lambda: collector.lines == 20 * 150, "all lines")
    for w in writers:
        w.close()
    assert collector.tracker.missing({w.source: 150 for w in writers}) == {}
    assert collector.tracker.duplicates() == {}


async def test_log_dir_created_after_start(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    collector = Collector()
    tailer = FileTailer(make_config(logs, rescan_interval_secs=0.3), store, "src")
    async with running(tailer, collector):
        await asyncio.sleep(0.2)
        write_lines(logs / "ns_p_u" / "c" / "0.log", "s", 0, 5)
        await collector.wait_for(lambda: collector.lines == 5, "lines in the late directory")


async def test_stop_cancels_a_blocked_emit_and_the_chunk_is_read_again(tmp_path: Path) -> None:
    logs = tmp_path / "pods"
    write_lines(logs / "ns_p_u" / "c" / "0.log", "s", 0, 10)
    store = CheckpointStore(tmp_path / "data")
    entered = asyncio.Event()

    async def stuck(chunk: Chunk) -> None:
        entered.set()
        await asyncio.Event().wait()  # a queue that never drains

    tailer = FileTailer(make_config(logs), store, "src")
    task = asyncio.create_task(tailer.run(stuck))
    await asyncio.wait_for(entered.wait(), WAIT)
    tailer.stop()
    await asyncio.wait_for(task, WAIT)
    store.flush()
    again = Collector()
    await asyncio.wait_for(FileTailer(make_config(logs), CheckpointStore(tmp_path / "data"), "src").run(
        again, once=True), WAIT)
    assert again.tracker.missing({"s": 10}) == {}


async def test_writer_appending_after_rename_is_not_cut_off(tmp_path: Path, store: CheckpointStore) -> None:
    """The runtime may write to the renamed file until it reopens; with only *.log
    included the renamed file is gone, and is read for gone_close_grace_secs more."""
    logs = tmp_path / "pods"
    path = logs / "ns_p_u" / "c" / "0.log"
    write_lines(path, "s", 0, 100)
    collector = Collector()
    config = make_config(logs, include_paths_glob_patterns=["**/*.log"], gone_close_grace_secs=0.5)
    tailer = FileTailer(config, store, "src")
    async with running(tailer, collector):
        await collector.wait_for(lambda: collector.lines == 100, "first lines")
        with open(path, "ab") as old:
            path.rename(path.with_name("0.log.20261202-101010"))
            await asyncio.sleep(0.15)
            old.write(b"".join(format_line("s", 100 + i) for i in range(5)))
        write_lines(path, "s", 105, 10)  # the reopened file
        await collector.wait_for(lambda: collector.lines == 115, "lines on both sides of the rename")
        await collector.wait_for(lambda: tailer.files_open == 1, "renamed file closed")
    assert collector.tracker.missing({"s": 115}) == {}
    assert collector.tracker.duplicates() == {}
    assert len(collector.eofs()) == 1


async def test_rotate_wait_bounds_how_long_a_gone_file_stays_open(tmp_path: Path, store: CheckpointStore) -> None:
    logs = tmp_path / "pods"
    path = logs / "ns_p_u" / "c" / "0.log"
    write_lines(path, "s", 0, 20_000, line_bytes=100)
    collector = Collector(auto_ack=False)
    config = make_config(logs, max_unacked_bytes=64 << 10, max_read_bytes=16 << 10, rotate_wait_secs=0.5)
    tailer = FileTailer(config, store, "src")
    async with running(tailer, collector):
        await collector.wait_for(lambda: tailer.unacked_bytes >= 64 << 10, "backpressure")
        path.unlink()
        await collector.wait_for(lambda: tailer.files_open == 0, "forced close")
    assert tailer.files_closed_unread == 1
    assert tailer.bytes_unread_on_close > 1 << 20
    assert collector.chunks[-1].eof


async def test_skipped_file_is_passed_over_unread_and_resumes_at_the_next_line(tmp_path: Path, store: CheckpointStore) -> None:
    log = tmp_path / "pods" / "ns_p_uid" / "c" / "0.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"first\n")
    tailer = FileTailer(make_config(tmp_path / "pods"), store, "src")
    skipping = {"on": False}
    tailer.set_skip(lambda f: skipping["on"])
    emit = Collector(parse=False)
    async with running(tailer, emit):
        await emit.wait_for(lambda: emit.lines == 1, "the first line")
        skipping["on"] = True
        with open(log, "ab") as fh:
            fh.write(b"skipped one\nskipped two\nhalf of a li")
        await emit.wait_for(lambda: tailer.bytes_skipped == len(b"skipped one\nskipped two\nhalf of a li"), "the pass-over")
        read = tailer.bytes_read
        skipping["on"] = False
        with open(log, "ab") as fh:
            fh.write(b"ne\nkept\n")
        await emit.wait_for(lambda: emit.lines == 2, "the line after the skipped part")
        assert tailer.bytes_read - read == len(b"ne\nkept\n")
    lines = [line for chunk in emit.chunks for line in chunk.lines]
    assert lines == [b"first", b"kept"]
    # the checkpoint covers the passed-over bytes: a restart reads nothing again
    store.flush()
    again = FileTailer(make_config(tmp_path / "pods"), CheckpointStore(tmp_path / "data"), "src")
    emit2 = Collector(parse=False)
    async with running(again, emit2):
        await asyncio.sleep(0.5)
    assert [line for chunk in emit2.chunks for line in chunk.lines] == []
