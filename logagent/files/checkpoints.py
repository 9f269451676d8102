"""Durable read offsets, one store per data_dir, shared by every file source.

Offsets are keyed by (source_id, file identity). The tailer updates them in
memory as chunks are acknowledged; while a tailer runs (:meth:`writing`), one
writer task persists them:

- every change, within ``HOLD_SECS``, or as soon as ``HOLD_BYTES`` of
  acknowledged progress wait to be written (but no closer than
  ``WRITE_SPACING_SECS`` after the last write, more under saturation, see
  ``WRITE_COST_FACTOR``), to ``checkpoints.json`` (temp file + rename, no
  fsync). Writes are coalesced: at most one is in flight and each takes the
  newest state. The hold: at 1,000 lines/s a write with its thread hop cost
  the agent about 0.7 ms of CPU, and written within 2 ms of every change
  there was one per sweep of reads (40-70 a second, a fifth to a quarter of
  the agent's CPU); a kill -9 re-delivers at most the progress held back,
  never loses any. Writes run in a thread: a write itself costs about 60 us
  of CPU, but on a disk busy with other writers its create and rename can
  wait milliseconds for the journal, which inline would stall the event loop (measured: about 10 % of wall-clock throughput). The rename
  is atomic, so a process crash (kill -9, OOM kill) at any moment leaves a
  whole document behind.
- about once a second (when something changed) and at shutdown, the same
  document also to ``checkpoints.synced.json``, with fsync of the file and of
  the directory, in a thread beside the main writes. A machine crash may
  leave the unsynced main file empty or old, never this one: it costs at most
  a second of checkpoint progress.

The file format and the atomic write are in ``checkpoint_file.py``. Each
document carries a generation number; at start the newer valid one of the
two files wins. A file that cannot be decoded (hand-edited, truncated) is
logged with its path and moved aside as ``<name>.<UTC time>.corrupt``; with no
valid file, every log file starts as if it were new (``read_from``). A failing
write (disk full, read-only data_dir) never stops the agent: it is counted in
``write_errors``, logged at most once a minute, and retried every
``RETRY_SECS`` with the state of that moment.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import structlog

from logagent.file_modes import narrow_directory
from logagent.files.checkpoint_file import (
    Checkpoint,
    Document,
    encode_document,
    read_document,
    remove_temp_files,
    write_atomically,
)
from logagent.observe.ratelimit import RateLimitedLogger

log = structlog.get_logger(__name__)

FILE_NAME = "checkpoints.json"
SYNCED_FILE_NAME = "checkpoints.synced.json"

#: shortest time between two writes of the main file while acknowledgements
#: keep coming (at high rates, where ``HOLD_BYTES`` comes quickly)
WRITE_SPACING_SECS = 0.002
#: ... and at least this many times as long as the last write took: when the
#: agent is busy (catching up), a write waits for the GIL and costs the main
#: thread more, so writes thin out and stay a small part of its work
WRITE_COST_FACTOR = 2.0
#: a change waits at most this long to be written ...
HOLD_SECS = 0.1
#: ... unless this many bytes of progress (offsets moved forward, all files
#: together) wait: what a kill -9 re-delivers stays below this or ``HOLD_SECS`` of lines
HOLD_BYTES = 8192
#: the fsync'ed copy is written this often while anything changed
SYNC_INTERVAL_SECS = 1.0
#: a failed write is tried again after this long
RETRY_SECS = 1.0
#: for benchmarks only: ``legacy`` restores the earlier cadence (one fsync'ed
#: write of the main file a second, no synced copy), to compare both in one run
CADENCE_ENV = "LOGAGENT_INTERNAL_CHECKPOINT_CADENCE"

__all__ = ["Checkpoint", "CheckpointStore"]


class CheckpointStore:
    def __init__(self, data_dir: str | os.PathLike[str], *, write_spacing_secs: float | None = None,
                 sync_interval_secs: float = SYNC_INTERVAL_SECS, hold_secs: float = HOLD_SECS,
                 hold_bytes: int = HOLD_BYTES) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / FILE_NAME
        self.synced_path = self.data_dir / SYNCED_FILE_NAME
        legacy = os.environ.get(CADENCE_ENV) == "legacy"
        #: every write is the fsync'ed kind, once per sync interval (the old cadence)
        self.legacy = legacy
        self.sync_interval_secs = sync_interval_secs
        if write_spacing_secs is None:
            write_spacing_secs = sync_interval_secs if legacy else WRITE_SPACING_SECS
        self.write_spacing_secs = write_spacing_secs
        self.hold_secs = 0.0 if legacy else hold_secs
        self.hold_bytes = 0 if legacy else hold_bytes
        #: bytes the offsets moved forward since the last snapshot
        self._unwritten_bytes = 0
        self._sources: dict[str, dict[str, Checkpoint]] = {}
        self._dirty = False
        self._changed: asyncio.Event | None = None
        #: writes of the main file (the writer's thread, or a final flush)
        self._main_lock = threading.Lock()
        #: writes of the synced copy (the writer's thread, or a final flush)
        self._sync_lock = threading.Lock()
        self._taken_gen = 0  # generation of the newest snapshot
        self._written_gen = 0  # generation in the main file
        self._written_payload = b""
        self._synced_gen = 0  # generation in the synced file
        self._next_write_at = 0.0
        self._synced_at = time.monotonic()
        self._writer: asyncio.Task[None] | None = None
        self._syncing: asyncio.Task[None] | None = None
        self._writer_users = 0
        self._failing = False
        self._errors_log = RateLimitedLogger(log, 60.0)
        # stats
        self.writes = 0
        self.syncs = 0
        self.write_errors = 0
        #: how long changes waited to reach the main file: the window a crash re-delivers
        self.persist_lag_max = 0.0
        self.persist_lag_total = 0.0
        self._dirty_since = 0.0
        self._snapshot_since = 0.0
        self._gens = itertools.count(self._load() + 1)

    # -- reading and updating (in memory) ------------------------------------

    def get(self, source_id: str, key: str) -> Checkpoint | None:
        return self._sources.get(source_id, {}).get(key)

    def set(self, source_id: str, key: str, checkpoint: Checkpoint) -> None:
        entries = self._sources.setdefault(source_id, {})
        before = entries.get(key)
        entries[key] = checkpoint
        if before is not None and checkpoint.offset > before.offset:
            self._unwritten_bytes += checkpoint.offset - before.offset
        self._changed_now()

    def remove(self, source_id: str, key: str) -> None:
        entries = self._sources.get(source_id)
        if entries is not None and entries.pop(key, None) is not None:
            self._changed_now()

    def keys(self, source_id: str) -> list[str]:
        return list(self._sources.get(source_id, ()))

    def _changed_now(self) -> None:
        # the writer is woken when there is something to write, and again once it may not wait
        wake = not self._dirty or self._unwritten_bytes >= self.hold_bytes
        if not self._dirty:
            self._dirty_since = time.monotonic()
        self._dirty = True
        if wake and self._changed is not None:
            self._changed.set()

    def _load(self) -> int:
        """Take the newer valid file; returns its generation (0 without one)."""
        best = _newest_document(self.data_dir, (self.path, self.synced_path))
        if best is None:
            return 0
        self._sources = best.sources
        self._written_gen = self._synced_gen = best.generation
        return best.generation

    # -- writing ----------------------------------------------------------------

    def _snapshot(self) -> tuple[int, bytes] | None:
        if not self._dirty:
            return None
        self._dirty = False
        self._unwritten_bytes = 0
        self._snapshot_since = self._dirty_since
        generation = self._taken_gen = next(self._gens)
        return generation, encode_document(Document(generation=generation, sources=self._sources))

    def _write_main(self, snapshot: tuple[int, bytes]) -> None:
        """Write ``snapshot`` to the main file (blocking; no fsync but in legacy mode)."""
        generation, payload = snapshot
        with self._main_lock:
            if generation <= self._written_gen:
                return  # a newer state is there already
            write_atomically(self.path, payload, sync=self.legacy)
            self._written_gen, self._written_payload = generation, payload
        self.writes += 1
        lag = time.monotonic() - self._snapshot_since
        self.persist_lag_total += lag
        self.persist_lag_max = max(self.persist_lag_max, lag)

    def _write_synced(self, generation: int, payload: bytes) -> None:
        """Write the fsync'ed copy (blocking, with fsync: run it in a thread)."""
        with self._sync_lock:
            if generation <= self._synced_gen:
                return
            write_atomically(self.synced_path, payload, sync=True)
            self._synced_gen = generation
        self.syncs += 1

    def flush(self) -> None:
        """Write the current offsets now, fsync'ed (blocking); raises OSError."""
        if self._written_gen < self._taken_gen:
            self._dirty = True  # a background write was lost (failed or cancelled)
        snapshot = self._snapshot()
        try:
            if snapshot is not None:
                self._write_main(snapshot)
            self._write_synced(self._written_gen, self._written_payload)
        except OSError:
            self._dirty = self._dirty or snapshot is not None
            self.write_errors += 1
            raise
        self._synced_at = time.monotonic()

    def try_flush(self) -> bool:
        """:meth:`flush`, with a failure logged (rate-limited) instead of raised."""
        try:
            self.flush()
        except OSError as exc:
            self._errors_log.error("checkpoints", "cannot write checkpoints", path=str(self.path), error=str(exc),
                                   write_errors=self.write_errors)
            return False
        return True

    def _sync_due(self) -> bool:
        return (not self.legacy and self._written_gen > self._synced_gen
                and (self._syncing is None or self._syncing.done()))

    async def _wait_for_change(self) -> None:
        """Until something changed, or the written state is due to be synced."""
        assert self._changed is not None
        while not self._dirty:
            timeout = None
            if self._sync_due():
                timeout = self._synced_at + self.sync_interval_secs - time.monotonic()
                if timeout <= 0:
                    return
            self._changed.clear()
            try:
                # not wait_for: on 3.11 it can swallow a cancellation that races the event
                async with asyncio.timeout(timeout):
                    await self._changed.wait()
            except TimeoutError:
                return

    async def _wait_until_due(self) -> None:
        """Until the pending change may be written (meanwhile later changes ride along)."""
        assert self._changed is not None
        while True:
            now = time.monotonic()
            due = self._next_write_at
            if self._dirty and self._unwritten_bytes < self.hold_bytes:
                due = max(due, self._dirty_since + self.hold_secs)
            if due <= now:
                return
            self._changed.clear()
            try:
                async with asyncio.timeout(due - now):
                    await self._changed.wait()  # set when the held bytes reach ``hold_bytes``
            except TimeoutError:
                return

    async def _write_loop(self) -> None:
        while True:
            await self._wait_for_change()
            await self._wait_until_due()
            now = time.monotonic()
            self._next_write_at = now + self.write_spacing_secs
            snapshot = self._snapshot()
            if snapshot is not None:
                try:
                    # in a thread: inline, a busy disk (journal) would stall the event loop
                    await asyncio.to_thread(self._write_main, snapshot)
                    took = time.monotonic() - now
                    self._next_write_at = max(self._next_write_at, now + took * (1 + WRITE_COST_FACTOR))
                except OSError as exc:
                    self._dirty = True  # the next attempt writes the state of that moment
                    self._write_failed(exc)
                    await asyncio.sleep(RETRY_SECS)
                    continue
                if self._failing:
                    self._failing = False
                    log.info("checkpoint writes work again", path=str(self.path))
            if self._sync_due() and now - self._synced_at >= self.sync_interval_secs:
                self._synced_at = now
                self._syncing = asyncio.create_task(self._sync(self._written_gen, self._written_payload),
                                                    name="checkpoint-sync")

    async def _sync(self, generation: int, payload: bytes) -> None:
        """The fsync'ed copy, beside the main writes (an fsync can take a while)."""
        try:
            await asyncio.to_thread(self._write_synced, generation, payload)
        except OSError as exc:
            self._write_failed(exc)  # tried again at the next interval
        finally:
            if self._changed is not None:
                self._changed.set()  # the writer may be waiting for this sync to end

    def _write_failed(self, exc: OSError) -> None:
        self._failing = True
        self.write_errors += 1
        self._errors_log.error("checkpoints", "cannot write checkpoints; retrying (the agent keeps running)",
                               path=str(self.path), error=str(exc), retry_secs=RETRY_SECS,
                               write_errors=self.write_errors)

    @contextlib.asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """Persist changes in the background while at least one user is inside this block."""
        self._writer_users += 1
        if self._writer is None:
            self._changed = asyncio.Event()
            self._writer = asyncio.create_task(self._write_loop(), name="checkpoint-writer")
        try:
            yield
        finally:
            self._writer_users -= 1
            if self._writer_users == 0 and self._writer is not None:
                self._writer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._writer
                if self._syncing is not None:
                    # an fsync'ed write in flight ends (its thread could not be stopped anyway), so the block
                    # is left with every write it started done and counted
                    with contextlib.suppress(asyncio.CancelledError):
                        await self._syncing
                self._writer = self._syncing = None
                self._changed = None

    def close(self) -> None:
        """Final fsync'ed write (the writer task, if any, ends with its last user); raises OSError."""
        self.flush()
        log.info("checkpoints saved", path=str(self.path), writes=self.writes, syncs=self.syncs,
                 write_errors=self.write_errors,
                 persist_lag_ms_mean=round(1000 * self.persist_lag_total / max(1, self.writes), 1),
                 persist_lag_ms_max=round(1000 * self.persist_lag_max, 1))


def _newest_document(data_dir: Path, paths: tuple[Path, ...]) -> Document | None:
    """The valid document of ``paths`` with the highest generation (temp files of a crash removed first)."""
    if data_dir.is_dir():
        with contextlib.suppress(OSError):  # a read-only data_dir is reported by the first write
            narrow_directory(data_dir)
    remove_temp_files(data_dir)
    best: Document | None = None
    for path in paths:
        document = read_document(path)
        if document is not None and (best is None or document.generation > best.generation):
            best = document
    return best
