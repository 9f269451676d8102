"""Change notifications for the log tree (inotify through watchfiles' Rust notifier).

``RustNotify.watch`` (watchfiles' documented Rust backend, which its ``awatch``
wraps) sleeps ``step_ms`` between checks and returns a batch once no new
change arrived during one step, or ``debounce_ms`` after the first change at
the latest. Every check takes the GIL, so the step is also how often an idle
agent wakes up. So there are two steps:

- while changes come, step 10 / debounce 20: a write is seen after about
  10-30 ms (with watchfiles' 50/100 it was 50-150 ms, the largest part of a
  quiet pod's delay to the sink);
- after ``idle_after_ms`` (1 s) without a change, ``idle_step_ms`` (25): an
  idle agent wakes 40 times a second instead of 100 (idle CPU 0.35 -> about
  0.25 % of a core), and the first write after a quiet second is seen within
  25-50 ms; the batches after it come at the short step again.

One thread runs the notifier for the whole watch and hands each batch to the
event loop (``call_soon_threadsafe``); ``awatch`` took an anyio worker thread
and a task group per batch. How often a busy file is read is bounded by the
tailer's read cooldown (``files/ready.py``), not by these batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import structlog

log = structlog.get_logger(__name__)

#: watchfiles.Change values
ADDED, MODIFIED, DELETED = 1, 2, 3

OnChanges = Callable[[set[tuple[int, str]]], None]


class Notifier(Protocol):
    """What is used of watchfiles' ``RustNotify``."""

    def watch(self, debounce_ms: int, step_ms: int, timeout_ms: int, stop_event: threading.Event) -> object: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Steps:
    """How the notifier checks for changes (milliseconds)."""

    step_ms: int
    debounce_ms: int
    idle_step_ms: int
    idle_after_ms: int


async def watch_tree(root: str, on_changes: OnChanges, stop_event: asyncio.Event, *, steps: Steps,
                     retry_secs: float) -> None:
    """Call ``on_changes`` with every batch of changes below ``root`` until ``stop_event``.

    Returns early (after logging why) if notifications cannot work, so the
    caller can fall back to polling; waits for ``root`` to appear if it is missing.
    """
    from watchfiles._rust_notify import RustNotify

    while not stop_event.is_set():
        try:
            notifier = RustNotify([root], False, False, 300, True, True)
            await _run_notifier(notifier, on_changes, stop_event, steps)
            return
        except FileNotFoundError:
            log.warning("log directory missing; waiting for it", log_dir=root)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop_event.wait(), retry_secs)
        except Exception as exc:  # inotify limits, unsupported filesystems ...
            log.warning("file change notifications unavailable; polling instead", log_dir=root, error=str(exc))
            return


async def _run_notifier(notifier: Notifier, on_changes: OnChanges, stop_event: asyncio.Event, steps: Steps) -> None:
    """Run ``notifier`` in its own thread until ``stop_event`` (or its error, raised here)."""
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    finished: asyncio.Future[None] = loop.create_future()

    def deliver(changes: set[tuple[int, str]]) -> None:
        if not stop.is_set():
            on_changes(changes)

    def finish(error: BaseException | None) -> None:
        if finished.done():
            return
        if error is None:
            finished.set_result(None)
        else:
            finished.set_exception(error)

    def run() -> None:
        error: BaseException | None = None
        try:
            notify_loop(notifier, lambda changes: loop.call_soon_threadsafe(deliver, changes), stop, steps)
        except BaseException as exc:  # handed to the event loop, which decides
            error = exc
        finally:
            notifier.close()  # here: closing it while watch() runs in this thread would fail
        with contextlib.suppress(RuntimeError):  # the event loop is closed already
            loop.call_soon_threadsafe(finish, error)

    threading.Thread(target=run, name="files-watch", daemon=True).start()
    stopping = asyncio.ensure_future(stop_event.wait())
    try:
        await asyncio.wait((stopping, finished), return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.set()  # the thread ends within one step (cancelled: on its own)
        stopping.cancel()
    await finished  # raises the thread's error


def notify_loop(notifier: Notifier, post: OnChanges, stop: threading.Event, steps: Steps) -> None:
    """Pass every batch of ``notifier`` to ``post``, at the short step while changes come, until ``stop``."""
    busy = False
    while not stop.is_set():
        if busy:
            result = notifier.watch(steps.debounce_ms, steps.step_ms, steps.idle_after_ms, stop)
        else:
            result = notifier.watch(steps.debounce_ms, steps.idle_step_ms, 0, stop)
        if result == "stop":
            return
        if result == "timeout":
            busy = False
        elif isinstance(result, set):  # ("signal" goes to the main thread, not this one)
            busy = True
            post(result)
