"""Fair reading: files take turns of at most ``max_read_bytes``, so a file that always has data delays another
file's lines by at most one of its turns (the policy the noisy-neighbour benchmark measures end to end)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from logagent.files import CheckpointStore, FileTailer
from tests.test_files_tailer import WAIT, Collector, make_config, write_lines

TURN = 4096


async def test_files_with_data_take_one_turn_each_in_order(tmp_path: Path) -> None:
    logs = tmp_path / "pods"
    write_lines(logs / "ns_noisy_u0" / "c" / "0.log", "noisy", 0, 5000, line_bytes=200)  # ~1 MB: 245 turns
    for i in range(5):
        write_lines(logs / f"ns_quiet{i}_u{i + 1}" / "c" / "0.log", f"quiet{i}", 0, 100, line_bytes=200)  # 5 turns
    collector = Collector()
    tailer = FileTailer(make_config(logs, max_read_bytes=TURN), CheckpointStore(tmp_path / "data"), "src")
    await asyncio.wait_for(tailer.run(collector, once=True), WAIT)
    order = [c.file.pod_name for c in collector.chunks if c.lines]
    assert max(c.nbytes for c in collector.chunks) <= TURN + 200  # a turn, and the line the last one cut
    # while every file has data, each round serves each file once
    for start in range(0, 4 * 6, 6):
        assert len(set(order[start : start + 6])) == 6, order[start : start + 6]
    # a quiet file's next chunk never waits for more than one turn of the noisy file
    for i in range(5):
        positions = [n for n, pod in enumerate(order) if pod == f"quiet{i}"]
        for before, after in zip(positions, positions[1:]):
            assert order[before + 1 : after].count("noisy") <= 1
    assert collector.tracker.missing({"noisy": 5000, **{f"quiet{i}": 100 for i in range(5)}}) == {}


async def test_a_quiet_file_written_during_a_flood_is_read_within_one_noisy_turn(tmp_path: Path) -> None:
    logs = tmp_path / "pods"
    write_lines(logs / "ns_noisy_u0" / "c" / "0.log", "noisy", 0, 50_000, line_bytes=200)  # ~10 MB
    collector = Collector()
    quiet_file = logs / "ns_quiet_u1" / "c" / "0.log"
    write_lines(quiet_file, "quiet", 0, 1)
    tailer = FileTailer(make_config(logs, max_read_bytes=TURN), CheckpointStore(tmp_path / "data"), "src")
    task = asyncio.create_task(tailer.run(collector))
    try:
        await collector.wait_for(lambda: "quiet" in collector.tracker.seen, "the quiet file's first line")
        for n in range(1, 4):  # the noisy file still has megabytes to read each time
            write_lines(quiet_file, "quiet", n, 1)
            tailer.poke("ns_quiet_u1")
            mark = len(collector.chunks)
            await collector.wait_for(lambda: len(collector.tracker.seen["quiet"]) == n + 1, f"quiet line {n}")
            after = [c.file.pod_name for c in collector.chunks[mark:] if c.lines]
            assert after[: after.index("quiet")].count("noisy") <= 1, after
    finally:
        tailer.stop()
        await asyncio.wait_for(task, WAIT)
    assert len(collector.tracker.seen["noisy"]) < 50_000  # the flood was still being read
