"""What tells the tailer that files changed: inotify, a poll fallback, the periodic rescan.

``ChangeFeed`` runs beside the tailer's main loop. It feeds the file table
(``lifecycle.FileTable``) and wakes the loop; it never reads a file. When
inotify is unavailable (``watch_tree`` returns before being stopped) it falls
back to polling: every file is marked ready once a second.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from logagent.files.config import TailerConfig
from logagent.files.lifecycle import FileTable
from logagent.files.model import TailedFile
from logagent.files.watch import Steps, watch_tree

_POLL_FALLBACK_SECS = 1.0


class ChangeFeed:
    def __init__(self, config: TailerConfig, log_dir: str, table: FileTable,
                 mark_ready: Callable[[TailedFile], None], wake: asyncio.Event,
                 on_changes: Callable[[set[tuple[int, str]]], None]) -> None:
        self.config = config
        self.log_dir = log_dir
        self.table = table
        self.mark_ready = mark_ready
        self.wake = wake
        self.on_changes = on_changes
        #: inotify failed: every file may have grown at any time
        self.polling = False
        self.stopped = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def full_scan(self, *, startup: bool) -> None:
        self.table.full_scan(startup=startup)
        if self.polling:
            self.mark_all_ready()

    def mark_all_ready(self) -> None:
        for f in list(self.table.files.values()):
            self.mark_ready(f)

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._watch(), name="files-watch"),
            asyncio.create_task(self._rescan_timer(), name="files-rescan"),
        ]

    async def stop(self) -> None:
        self.stopped.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _watch(self) -> None:
        config = self.config
        steps = Steps(step_ms=config.watch_step_ms, debounce_ms=config.watch_debounce_ms,
                      idle_step_ms=config.watch_idle_step_ms, idle_after_ms=config.watch_idle_after_ms)
        await watch_tree(self.log_dir, self.on_changes, self.stopped, steps=steps,
                         retry_secs=config.rescan_interval_secs)
        if self.stopped.is_set():
            return
        self.polling = True
        while not self.stopped.is_set():
            await asyncio.sleep(_POLL_FALLBACK_SECS)
            self.mark_all_ready()
            self.table.poke(self.log_dir)
            self.wake.set()

    async def _rescan_timer(self) -> None:
        while True:
            await asyncio.sleep(self.config.rescan_interval_secs)
            self.table.full_scan_due = True
            self.wake.set()
