"""Change notifications: batches reach the event loop from the notifier's thread, at the short step while
changes come and at the idle step after a quiet spell; stopping ends the thread; a failing notifier makes
the caller poll."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import structlog.testing

from logagent.files.watch import ADDED, MODIFIED, Steps, notify_loop, watch_tree

STEPS = Steps(step_ms=10, debounce_ms=20, idle_step_ms=25, idle_after_ms=1000)


class ScriptedNotifier:
    """Answers ``watch`` calls from a script, recording each call's (debounce, step, timeout)."""

    def __init__(self, answers: list[object]) -> None:
        self.answers = answers
        self.calls: list[tuple[int, int, int]] = []

    def watch(self, debounce_ms: int, step_ms: int, timeout_ms: int, stop: threading.Event) -> object:
        self.calls.append((debounce_ms, step_ms, timeout_ms))
        return self.answers.pop(0)

    def close(self) -> None:
        self.answers.clear()


def test_short_step_while_changes_come_idle_step_after_a_quiet_spell() -> None:
    one, two, three = {(MODIFIED, "/a")}, {(MODIFIED, "/b")}, {(ADDED, "/c")}
    notifier = ScriptedNotifier([one, two, "timeout", "signal", three, "stop"])
    posted: list[set[tuple[int, str]]] = []
    notify_loop(notifier, posted.append, threading.Event(), STEPS)
    assert posted == [one, two, three]
    idle, busy = (20, 25, 0), (20, 10, 1000)
    assert notifier.calls == [idle, busy, busy, idle, idle, busy]


def test_a_stop_ends_the_loop_before_the_next_watch() -> None:
    stop = threading.Event()
    notifier = ScriptedNotifier([{(MODIFIED, "/a")}])
    notify_loop(notifier, lambda changes: stop.set(), stop, STEPS)
    assert len(notifier.calls) == 1


async def test_changes_reach_the_loop_and_a_stop_ends_the_watch(tmp_path: Path) -> None:
    batches: list[set[tuple[int, str]]] = []
    arrived = asyncio.Event()

    def on_changes(changes: set[tuple[int, str]]) -> None:
        assert threading.current_thread() is threading.main_thread()  # called in the event loop
        batches.append(changes)
        if any(path == str(target) for _, path in changes):
            arrived.set()

    stop = asyncio.Event()
    target = tmp_path / "pod" / "0.log"
    with structlog.testing.capture_logs() as logs:
        watching = asyncio.create_task(watch_tree(str(tmp_path), on_changes, stop, steps=STEPS, retry_secs=1.0))
        target.parent.mkdir()
        for _ in range(200):  # the notifier's inotify watches are set up in the background
            target.write_text("x\n")
            try:
                await asyncio.wait_for(arrived.wait(), 0.05)
                break
            except asyncio.TimeoutError:
                pass
        stop.set()
        await asyncio.wait_for(watching, 10)
    assert arrived.is_set()
    assert not [e for e in logs if "polling" in e["event"]]
    for thread in [t for t in threading.enumerate() if t.name == "files-watch"]:
        thread.join(10)  # it ends within one step of the stop
        assert not thread.is_alive()


async def test_a_notifier_that_fails_makes_the_caller_poll(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def failing(*args: object) -> None:
        raise RuntimeError("error in underlying watcher: too many open files")

    monkeypatch.setattr("logagent.files.watch.notify_loop", failing)
    with structlog.testing.capture_logs() as logs:
        await asyncio.wait_for(watch_tree(str(tmp_path), lambda changes: None, asyncio.Event(),
                                          steps=STEPS, retry_secs=1.0), 10)
    assert [e for e in logs if "polling" in e["event"] and "too many open files" in e["error"]]
