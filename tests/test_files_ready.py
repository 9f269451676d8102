"""The tailer's ready queue: notifications make a file ready at most once per tick of the read cooldown, busy
files together, without ratcheting a steady writer's reads later and later; reading on is never held back."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from logagent.files import CheckpointStore, FileTailer
from logagent.files.ready import ReadyQueue
from tests.test_files_tailer import WAIT, Collector, make_config, write_lines

COOLDOWN = 0.1


class Clock:
    def __init__(self) -> None:
        self.now = 1000.03  # a tick began 30 ms ago

    def __call__(self) -> float:
        return self.now


class FakeState:
    def __init__(self) -> None:
        self.queued = self.cooling = self.closed = False
        self.read_after = float("-inf")


class FakeFile:
    def __init__(self, name: str) -> None:
        self.name = name
        self.state = FakeState()
        self.state.seq = 0  # type: ignore[attr-defined]


def queue(clock: Clock) -> ReadyQueue:
    return ReadyQueue(False, asyncio.Event(), COOLDOWN, clock)


def test_a_file_not_read_lately_is_ready_at_once() -> None:
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is f and ready.pop() is None


def test_a_notification_before_the_next_tick_waits_for_it() -> None:
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    ready.turn_started(f)  # type: ignore[arg-type]
    clock.now += 0.03
    ready.changed(f)  # type: ignore[arg-type]
    ready.changed(f)  # type: ignore[arg-type]  # again: still one wait
    assert ready.pop() is None
    wait = ready.due_in()
    assert wait is not None and 0.03 <= wait <= 0.04  # until the tick at 1000.1 (a few ms of slack)
    clock.now += wait
    assert ready.pop() is f and ready.pop() is None and ready.due_in() is None
    ready.turn_started(f)  # type: ignore[arg-type]
    clock.now = 1000.2  # the next tick
    ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is f


def test_a_turn_served_just_before_its_tick_waits_for_the_following_one() -> None:
    """pop serves a file a few ms before its tick; reading it then must not make it due at that same tick."""
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    ready.turn_started(f)  # type: ignore[arg-type]
    clock.now = 1000.095
    ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is f  # the tick at 1000.1 is 5 ms away
    ready.turn_started(f)  # type: ignore[arg-type]
    clock.now = 1000.11
    ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is None  # once per tick: the next is 1000.2


def test_reading_on_after_a_turn_is_not_held_back() -> None:
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    for _ in range(1000):  # a file with megabytes to read: turn after turn
        ready.turn_started(f)  # type: ignore[arg-type]
        ready.add(f)  # type: ignore[arg-type]
        assert ready.pop() is f
        clock.now += 0.001
    # all those turns make it wait for the next tick at most
    assert f.state.read_after <= clock.now + COOLDOWN
    clock.now += COOLDOWN
    ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is f


def test_busy_files_are_read_together_at_each_tick() -> None:
    """Files read at different moments of a tick and changed again: all ready at the next tick, not before."""
    clock = Clock()
    ready = queue(clock)
    files = [FakeFile(str(i)) for i in range(3)]
    for f in files:
        ready.turn_started(f)  # type: ignore[arg-type]
        clock.now += 0.02
    for f in files:
        ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is None  # 1000.09: the tick at 1000.1 is not here yet
    clock.now = 1000.1
    assert [ready.pop(), ready.pop(), ready.pop(), ready.pop()] == [*files, None]
    for f in files:
        ready.turn_started(f)  # type: ignore[arg-type]
        ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is None and ready.due_in() is not None  # the next tick, 1000.2
    clock.now = 1000.2
    assert [ready.pop(), ready.pop(), ready.pop(), ready.pop()] == [*files, None]


def test_a_steady_writer_is_read_as_each_notification_comes() -> None:
    """A file written once per cooldown, its notifications 5-30 ms late: no read waits (no ratchet)."""
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    rng = random.Random(7)
    waits = []
    start = clock.now
    for k in range(200):
        clock.now = start + k * COOLDOWN + rng.uniform(0.005, 0.03)  # the write's notification
        ready.changed(f)  # type: ignore[arg-type]
        seen = clock.now
        if ready.pop() is None:
            clock.now += ready.due_in()  # type: ignore[operator]
            assert ready.pop() is f
        waits.append(clock.now - seen)
        clock.now += 0.002  # the turn begins a little later
        ready.turn_started(f)  # type: ignore[arg-type]
    assert max(waits[10:]) < 0.03, max(waits)


async def test_a_busy_file_is_read_about_once_per_cooldown_at_most(tmp_path: Path) -> None:
    """Written every few ms for a while: read in a turn or two per cooldown, not one per notification."""

    async def run() -> tuple[int, float]:
        logs = tmp_path / "pods"
        path = logs / "ns_busy_u0" / "c" / "0.log"
        write_lines(path, "busy", 0, 1)
        collector = Collector()
        tailer = FileTailer(make_config(logs), CheckpointStore(tmp_path / "data"), "src")
        task = asyncio.create_task(tailer.run(collector))
        loop = asyncio.get_running_loop()
        try:
            await collector.wait_for(lambda: "busy" in collector.tracker.seen, "the first line")
            start, n = loop.time(), 1
            while loop.time() - start < 1.0:
                write_lines(path, "busy", n, 1)
                n += 1
                await asyncio.sleep(0.003)
            elapsed = loop.time() - start
            await collector.wait_for(lambda: len(collector.tracker.seen["busy"]) == n, "every line")
            return sum(1 for c in collector.chunks if c.count), elapsed
        finally:
            tailer.stop()
            await asyncio.wait_for(task, WAIT)

    chunks, elapsed = await run()
    cooldown = make_config(tmp_path).read_cooldown_ms / 1000
    # the first read, one per cooldown while writing (two after a quiet spell), the last lines
    assert chunks <= 3 + 2 * (elapsed / cooldown + 1), chunks
