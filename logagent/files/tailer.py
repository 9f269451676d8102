"""Tailing the kubelet log tree: the coordinator of discovery, reading and acknowledgement.

One coroutine (the main loop) owns all file state: it applies discovery
results to the file table (``lifecycle.FileTable``: change notifications,
pokes, the periodic rescan, rotation and gone files), then reads the files
that are ready one turn at a time (round-robin, or oldest first) through each
file's ``reader.FileReader`` and awaits ``emit`` for each chunk. Every chunk is
recorded in the ``ledger.AckLedger``; its acknowledgement advances the file's
checkpoint over the contiguous run of finished chunks.

A file that shrinks below the read offset (copy-truncate), or whose leading
bytes change, is read again from 0.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable

import structlog

from logagent.files.change_feed import ChangeFeed
from logagent.files.checkpoints import CheckpointStore
from logagent.files.config import TailerConfig
from logagent.files.ledger import AckLedger
from logagent.files.lifecycle import FileState, FileTable
from logagent.files.model import Chunk, TailedFile
from logagent.files.ready import ReadyQueue, TurnPacer

log = structlog.get_logger(__name__)

Emit = Callable[[Chunk], Awaitable[None]]

_GONE_CHECK_SECS = 0.25


class FileTailer:
    """Tails the files of one source and emits :class:`Chunk` s of complete lines."""

    def __init__(self, config: TailerConfig, checkpoints: CheckpointStore, source_id: str) -> None:
        self.config = config
        self.checkpoints = checkpoints
        self.source_id = source_id
        self.log_dir = os.path.abspath(config.log_dir)
        self._wake = asyncio.Event()
        self._ready = ReadyQueue(config.oldest_first, self._wake, config.read_cooldown_ms / 1000)
        self._ledger = AckLedger(checkpoints, source_id, self._wake.set)
        self._table = FileTable(config, self.log_dir, self._ledger, mark_ready=self._ready.add,
                                restart=self._restart_truncated, mark_changed=self._ready.changed)
        self._feed = ChangeFeed(config, self.log_dir, self._table, self._ready.add, self._wake,
                                lambda changes: self._on_changes(changes))
        self._stopping = False
        self._pacer = TurnPacer()
        self._emit: Emit | None = None
        self._emitting: asyncio.Task[None] | None = None
        self._skip: Callable[[TailedFile], bool] | None = None
        # stats
        #: bytes of skipped files passed over without being read
        self.bytes_skipped = 0
        self.lines_truncated = 0
        self.bytes_read = 0
        self.chunks_emitted = 0
        self.files_closed_unread = 0
        self.bytes_unread_on_close = 0
        self.truncations = 0

    # -- stats ----------------------------------------------------------------

    @property
    def files_open(self) -> int:
        return len(self._table.files)

    @property
    def files_opened(self) -> int:
        return self._table.files_opened

    @property
    def files_closed(self) -> int:
        return self._table.files_closed

    @property
    def files_open_deleted(self) -> int:
        """Open files that no longer have a name (an fstat each: call it at scrape time)."""
        return self._table.count_deleted()

    @property
    def unacked_bytes(self) -> int:
        return self._ledger.unacked

    def held_changed(self, delta: int) -> None:
        """The source holds ``delta`` bytes more (or fewer) of chunks back for unfinished records.

        Held bytes do not count against ``max_unacked_bytes``: reading on is
        what finishes those records (and what lets them go past the source's
        per-file cap). Without this, a few files each in the middle of a long
        record could fill the budget with nothing in flight to a sink, and
        reading would wait for acknowledgements that cannot come.
        """
        self._ledger.held += delta

    @property
    def backpressure_pauses(self) -> int:
        return self._ledger.pauses

    @property
    def checkpoint_lag_bytes(self) -> int:
        """Bytes of open files (as large as last seen) past their checkpoint."""
        return self._table.checkpoint_lag_bytes()

    @property
    def behind_bytes(self) -> int:
        """Bytes of open files not read yet (an fstat each: call it at scrape time)."""
        return self._table.behind_bytes()

    def oldest_unacked_at(self) -> float | None:
        """When the oldest chunk no sink has acknowledged yet was read (monotonic); None if none."""
        return self._ledger.oldest_unacked_at()

    def files(self) -> list[TailedFile]:
        return list(self._table.files.values())

    # -- control --------------------------------------------------------------

    def poke(self, pod_dir_name: str) -> None:
        """Look at ``<log_dir>/<pod_dir_name>`` now (e.g. a pod was just added)."""
        if not pod_dir_name or "/" in pod_dir_name or pod_dir_name in (".", ".."):
            return
        self._table.poke(os.path.join(self.log_dir, pod_dir_name))
        self._wake.set()

    def set_skip(self, predicate: Callable[[TailedFile], bool] | None) -> None:
        """Files for which ``predicate`` is true (asked before each read) are not read.

        Their new bytes are passed over: the offset moves to the end of the
        file (inside a line, the rest of that line is skipped once reading
        resumes) through an empty chunk, so the checkpoint follows in order.
        The consumer uses this for files whose lines it would drop anyway,
        such as those of excluded pods.
        """
        self._skip = predicate

    def stop(self) -> None:
        """Stop reading; ``run`` returns soon.

        An ``emit`` that is blocked (a full queue) is cancelled: its chunk is
        never acknowledged, so its lines are read again after a restart.
        """
        self._stopping = True
        self._feed.stopped.set()
        self._wake.set()
        if self._emitting is not None:
            self._emitting.cancel()

    async def run(self, emit: Emit, *, once: bool = False) -> None:
        self._emit = emit
        try:
            self._feed.full_scan(startup=True)
            self._table.prune_checkpoints()
            async with self.checkpoints.writing():
                if once:
                    await self._run_once()
                    return
                self._feed.start()
                try:
                    await self._main_loop()
                finally:
                    await self._feed.stop()
        finally:
            self._ledger.wait_for_acks(False)
            for f in list(self._table.files.values()):
                self._table.release(f)

    # -- the main loop ----------------------------------------------------------

    async def _main_loop(self) -> None:
        table = self._table
        while not self._stopping:
            if table.apply_discovery() and self._feed.polling:
                self._feed.mark_all_ready()  # a full rescan: in poll mode every file may have grown
            for expired in table.expired_gone():
                await self._close(expired, final=True)
            if self._ledger.over_budget(self.config.max_unacked_bytes):
                await self._sleep(_GONE_CHECK_SECS if table.gone else None)
                continue
            f = self._ready.pop()
            if f is None:
                await self._sleep(self._idle_timeout())
                continue
            await self._read_turn(f)
            if self._pacer.turn_done(self.bytes_read):
                await asyncio.sleep(0)  # let notifications, acks and sinks run (see TurnPacer)
                self._pacer.others_ran(self.bytes_read)

    async def _run_once(self) -> None:
        while not self._stopping:
            if self._ledger.over_budget(self.config.max_unacked_bytes):
                await self._sleep(None)
                continue
            f = self._ready.pop()
            if f is None:
                break
            await self._read_turn(f, once=True)
        for f in list(self._table.files.values()):
            if self._stopping:
                break
            await self._close(f, final=f.state.deleted or f.state.gone_since is not None)
        self._ledger.wait_for_acks(self._ledger.chunks_in_flight > 0)  # the last ones: nothing more to read
        while self._ledger.chunks_in_flight > 0 and not self._stopping:
            await self._sleep(None)
        self._ledger.wait_for_acks(False)
        self.checkpoints.try_flush()

    def _idle_timeout(self) -> float | None:
        """How long the main loop may sleep with nothing ready: until a cooling file is due, or a gone file's check."""
        due = self._ready.due_in()
        if self._table.gone:
            return _GONE_CHECK_SECS if due is None else min(due, _GONE_CHECK_SECS)
        return due

    async def _sleep(self, timeout: float | None) -> None:
        self._wake.clear()
        if timeout is None:
            await self._wake.wait()
        else:
            # a timer that sets the event: cheaper than wait_for (a task per call), and the loop sleeps often
            timer = asyncio.get_running_loop().call_later(timeout, self._wake.set)
            try:
                await self._wake.wait()
            finally:
                timer.cancel()
        self._pacer.others_ran(self.bytes_read)

    # -- reading ------------------------------------------------------------------

    async def _read_turn(self, f: TailedFile, *, once: bool = False) -> None:
        state: FileState = f.state
        if state.closed:
            return
        reader = state.reader
        try:
            st = os.fstat(reader.fd)
        except OSError as exc:
            log.warning("cannot stat open log file; closing it", path=f.path, error=str(exc))
            await self._close(f, final=True)
            return
        if st.st_nlink == 0 and not state.deleted:
            state.deleted = True
            self._table.set_gone(f)
        if st.st_size < reader.read_pos:
            self._restart_truncated(f, "file shrank below the read offset")
        reader.size = st.st_size
        reader.take_fingerprint(st.st_size, self.config.fingerprint_bytes)
        want = min(self.config.max_read_bytes, st.st_size - reader.read_pos)
        if want <= 0:
            if state.gone_since is not None and (
                once or time.monotonic() - state.gone_since >= self.config.gone_close_grace_secs
            ):
                await self._close(f, final=True)
            return
        if self._skip is not None and self._skip(f):
            self.bytes_skipped += reader.pass_over(st.st_size, self.config.max_line_bytes)
            await self._emit_chunk(f, [], None, st.st_size, eof=False)
            return
        try:
            data = reader.read(want)
        except OSError as exc:
            log.warning("cannot read log file; closing it", path=f.path, error=str(exc))
            await self._close(f, final=True)
            return
        self._ready.turn_read(f, len(data))
        if not data:
            return
        self.bytes_read += len(data)
        if reader.read_pos < st.st_size:
            self._ready.add(f)  # more to read: back of the queue, others get their turn
        block, lines, truncated, end = reader.split(data)
        if block is not None:  # the common read: complete lines, none cut, left unsplit
            await self._emit_chunk(f, None, None, end, eof=False, block=block)
        elif lines:
            self.lines_truncated += len(truncated) if truncated else 0
            await self._emit_chunk(f, lines, frozenset(truncated) if truncated else None, end, eof=False)

    async def _emit_chunk(self, f: TailedFile, lines: list[bytes] | None, truncated: frozenset[int] | None,
                          end: int, *, eof: bool, block: bytes | None = None) -> None:
        if self._stopping:
            return
        reader = f.state.reader
        nbytes = max(0, end - reader.emitted_end)
        reader.emitted_end = max(end, reader.emitted_end)
        ack = self._ledger.track(f, end, reader.splitter.skipping, nbytes)
        chunk = Chunk(f, lines, truncated, ack, nbytes, end, eof, block)
        self.chunks_emitted += 1
        assert self._emit is not None
        self._emitting = asyncio.current_task()
        try:
            await self._emit(chunk)
        except asyncio.CancelledError:
            if not self._stopping:
                raise
        finally:
            self._emitting = None

    def _restart_truncated(self, f: TailedFile, reason: str) -> None:
        log.info("log file truncated; reading it again from the start", path=f.path, reason=reason)
        self.truncations += 1
        f.state.reader.restart()
        self._ledger.truncated(f)

    async def _close(self, f: TailedFile, *, final: bool) -> None:
        """Emit the file's eof chunk and stop tailing it.

        ``final``: the file is gone, so a last line without its newline is
        emitted too (it can never be completed).
        """
        state: FileState = f.state
        if state.closed:
            return
        reader = state.reader
        unread = max(0, reader.size - reader.read_pos)
        if unread:
            self.files_closed_unread += 1
            self.bytes_unread_on_close += unread
            log.warning("closing rotated/deleted log file with unread data", path=f.path, unread_bytes=unread)
        tail, end = reader.take_unterminated() if final else (None, reader.emitted_end)
        self._table.release(f)
        if not state.deleted:
            self._table.lingering[reader.key] = f.path
        await self._emit_chunk(f, [tail] if tail is not None else [], None, end, eof=True)

    # -- discovery ------------------------------------------------------------------

    def _on_changes(self, changes: set[tuple[int, str]]) -> None:
        self._table.on_changes(changes)
        self._wake.set()
