"""Change notifications for the log tree (inotify through watchfiles).

watchfiles' Rust loop sleeps ``step_ms`` between checks and returns a batch
once no new change arrived during one step, or ``debounce_ms`` after the first
change at the latest. Its default debounce (1600 ms) would add up to 1.6 s of
latency; we use step 10 / debounce 20, so a write is seen after about 10-30 ms
(it was 50/100: 50-150 ms, the largest part of a quiet pod's delay). How often
a busy file is read is bounded by the tailer's read cooldown
(``files/ready.py``), not by these batches. When idle the loop wakes 100 times
a second to check the stop event, about 0.1 % of a core.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

log = structlog.get_logger(__name__)

#: watchfiles.Change values
ADDED, MODIFIED, DELETED = 1, 2, 3

OnChanges = Callable[[set[tuple[int, str]]], None]


async def watch_tree(
    root: str,
    on_changes: OnChanges,
    stop_event: asyncio.Event,
    *,
    step_ms: int,
    debounce_ms: int,
    retry_secs: float,
) -> None:
    """Call ``on_changes`` with every batch of changes below ``root`` until ``stop_event``.

    Returns early (after logging why) if notifications cannot work, so the
    caller can fall back to polling; waits for ``root`` to appear if it is missing.
    """
    from watchfiles import awatch

    while not stop_event.is_set():
        try:
            async for changes in awatch(
                root,
                watch_filter=None,
                step=step_ms,
                debounce=debounce_ms,
                stop_event=stop_event,
                recursive=True,
                ignore_permission_denied=True,
                force_polling=False,
            ):
                on_changes(changes)  # type: ignore[arg-type]  # (Change, path): Change is an IntEnum
            return
        except FileNotFoundError:
            log.warning("log directory missing; waiting for it", log_dir=root)
            try:
                await asyncio.wait_for(stop_event.wait(), retry_secs)
            except asyncio.TimeoutError:
                pass
        except Exception as exc:  # inotify limits, unsupported filesystems ...
            log.warning("file change notifications unavailable; polling instead", log_dir=root, error=str(exc))
            return
