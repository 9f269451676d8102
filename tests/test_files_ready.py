"""The tailer's ready queue: notifications make a file ready about once per read cooldown at most, without
ratcheting a steady writer's reads later and later, and waiting files join the sweeps notifications start;
reading on after a turn is never held back."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from logagent.files import CheckpointStore, FileTailer
from logagent.files.ready import BIG_TURN_BYTES, YIELD_SECS, ReadyQueue, TurnPacer
from tests.test_files_tailer import WAIT, Collector, make_config, write_lines

COOLDOWN = 0.1


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

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


def test_a_notification_during_the_cooldown_waits_for_its_end() -> None:
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    ready.turn_read(f, 100)  # type: ignore[arg-type]  # after a quiet spell: may be read again at once
    ready.turn_read(f, 100)  # type: ignore[arg-type]  # a second turn: the cooldown runs now
    clock.now += 0.03
    ready.changed(f)  # type: ignore[arg-type]
    ready.changed(f)  # type: ignore[arg-type]  # again: still one wait
    assert ready.pop() is None
    clock.now += 0.065  # 5 ms before its time: served (the slack)
    assert ready.pop() is f and ready.pop() is None and ready.due_in() is None


def test_the_loop_serves_a_waiting_file_itself_a_little_after_its_time() -> None:
    """No notification may come to start a sweep: the loop's timer is set a little after the file's time."""
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    ready.turn_read(f, 100)  # type: ignore[arg-type]
    ready.turn_read(f, 100)  # type: ignore[arg-type]
    ready.changed(f)  # type: ignore[arg-type]
    wait = ready.due_in()
    assert wait is not None and COOLDOWN + 0.01 <= wait <= COOLDOWN + 0.05
    clock.now += wait
    assert ready.pop() is f


def test_reading_on_after_a_turn_is_not_held_back() -> None:
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    for _ in range(1000):  # a file with megabytes to read: turn after turn
        ready.turn_read(f, 100)  # type: ignore[arg-type]
        ready.add(f)  # type: ignore[arg-type]
        assert ready.pop() is f
        clock.now += 0.001
    # all those turns make a notification wait one cooldown at most
    assert f.state.read_after <= clock.now + COOLDOWN
    clock.now += COOLDOWN
    ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is f


def test_no_cooldown_after_a_turn_that_read_a_lot() -> None:
    """A file writing megabytes a second: its turns are worth their cost, and holding it back makes bursts."""
    clock = Clock()
    ready = queue(clock)
    f = FakeFile("a")
    for nbytes in (100, 100):
        ready.turn_read(f, nbytes)  # type: ignore[arg-type]
    clock.now += 0.01
    ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is None  # two small turns: the cooldown runs
    clock.now += COOLDOWN
    assert ready.pop() is f
    ready.turn_read(f, BIG_TURN_BYTES)  # type: ignore[arg-type]
    clock.now += 0.01
    ready.changed(f)  # type: ignore[arg-type]
    assert ready.pop() is f


def test_waiting_files_are_served_together() -> None:
    """Every waiting file whose time has come (or is a few ms away) goes with the same pass of the loop."""
    clock = Clock()
    ready = queue(clock)
    files = [FakeFile(str(i)) for i in range(3)]
    for i, f in enumerate(files):
        ready.turn_read(f, 100)  # type: ignore[arg-type]
        ready.turn_read(f, 100)  # type: ignore[arg-type]
        ready.changed(f)  # type: ignore[arg-type]
        clock.now += 0.004 if i == 0 else 0.05
    clock.now = files[0].state.read_after
    assert [ready.pop(), ready.pop(), ready.pop()] == [files[0], files[1], None]  # the third is 50 ms later


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
        ready.turn_read(f, 100)  # type: ignore[arg-type]
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


def test_the_loop_yields_after_a_big_read_or_a_stretch_of_small_turns_not_after_each_turn() -> None:
    clock = Clock()
    pacer = TurnPacer(clock)
    pacer.others_ran(0)
    total = 0
    for _ in range(100):  # a sweep of small turns, faster than YIELD_SECS: one stretch
        total += 120
        assert not pacer.turn_done(total)
        clock.now += YIELD_SECS / 200
    clock.now += YIELD_SECS
    assert pacer.turn_done(total)  # the stretch lasted long enough: the others run now
    pacer.others_ran(total)
    assert not pacer.turn_done(total + BIG_TURN_BYTES - 1)
    assert pacer.turn_done(total + BIG_TURN_BYTES)  # one big turn: the others run at once
